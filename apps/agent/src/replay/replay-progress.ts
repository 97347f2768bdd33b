import { SingleBar } from "cli-progress";

/** Reports replay progress on stderr: a bar on a terminal, a plain line every tenth of the way otherwise. */
export interface ReplayProgress {
  /** Called after each replayed call. */
  update(done: number, total: number): void;
  /** Called once at the end (success or failure); clears the bar. */
  stop(): void;
}

export function createReplayProgress(
  stream: { write(text: string): unknown; isTTY?: boolean } = process.stderr,
): ReplayProgress {
  if (stream.isTTY) {
    const bar = new SingleBar({
      stream: stream as NodeJS.WritableStream,
      format: "replaying {bar} {value}/{total} calls · {percentage}% · {eta_formatted} left",
      barCompleteChar: "█",
      barIncompleteChar: "░",
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 50,
    });
    let started = false;
    return {
      update(done, total) {
        if (!started) {
          bar.start(total, 0);
          started = true;
        }
        bar.setTotal(total);
        bar.update(done);
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  let lastTenth = -1;
  return {
    update(done, total) {
      const tenth = Math.floor((done / Math.max(1, total)) * 10);
      if (tenth === lastTenth) return;
      lastTenth = tenth;
      stream.write(`replayed ${done}/${total} calls (${Math.floor((done / Math.max(1, total)) * 100)}%)\n`);
    },
    stop() {},
  };
}
