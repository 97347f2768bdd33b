// Calls fn once calls have stopped for wait milliseconds; the last arguments win.
export function debounce(fn, wait) {
  let timer;
  let lastArgs;
  const debounced = (...args) => {
    lastArgs = args;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      fn(...lastArgs);
    }, wait);
  };
  debounced.cancel = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  debounced.pending = () => timer !== undefined;
  return debounced;
}

const save = debounce((text) => console.log(`saved ${text.length} characters`), 300);
for (const word of ["a", "ab", "abc"]) save(word);
