#include <stdlib.h>
#include <string.h>

/* A fixed-size ring buffer of bytes: writes overwrite the oldest data when full. */
typedef struct {
    unsigned char *data;
    size_t capacity;
    size_t head;  /* next write position */
    size_t size;  /* bytes stored */
} ring_t;

int ring_init(ring_t *ring, size_t capacity) {
    ring->data = malloc(capacity);
    if (ring->data == NULL) return -1;
    ring->capacity = capacity;
    ring->head = 0;
    ring->size = 0;
    return 0;
}

void ring_write(ring_t *ring, const unsigned char *bytes, size_t count) {
    for (size_t i = 0; i < count; i++) {
        ring->data[ring->head] = bytes[i];
        ring->head = (ring->head + 1) % ring->capacity;
        if (ring->size < ring->capacity) ring->size++;
    }
}

size_t ring_read(const ring_t *ring, unsigned char *out, size_t count) {
    size_t n = count < ring->size ? count : ring->size;
    size_t start = (ring->head + ring->capacity - ring->size) % ring->capacity;
    for (size_t i = 0; i < n; i++) out[i] = ring->data[(start + i) % ring->capacity];
    return n;
}

void ring_free(ring_t *ring) {
    free(ring->data);
    memset(ring, 0, sizeof *ring);
}
