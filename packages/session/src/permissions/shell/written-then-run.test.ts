import { describe, expect, it } from "vitest";
import { shellAnalyzer } from "./shell-analyzer.ts";

const options = { homeDir: "/home/me", cwd: "/work/project" };

describe("a file the command writes, then runs", () => {
  it("names the file run and what may have written it", async () => {
    const analyze = await shellAnalyzer();
    expect(analyze("cp /bin/rm l; ./l x", options).unresolved).toEqual([
      "it runs `./l`, and `cp /bin/rm l` in the same command may write, copy or link that file first, so what runs is not what the command shows",
    ]);
    expect(analyze("echo 'rm x' > s; bash ../project/s", options).unresolved).toEqual([
      "it runs `../project/s`, a file the same command writes (`s`), whose content is not checked",
    ]);
  });

  it("resolves paths against the working directory, through its own name", async () => {
    const analyze = await shellAnalyzer();
    expect(analyze("echo x > /work/project/s; bash ./sub/../s", options).unresolved).toHaveLength(1);
    expect(analyze("echo x > ../other/s; bash s", options).unresolved).toEqual([]);
    // Without a working directory, relative paths compare as written.
    expect(analyze("echo x > s; bash ./s", { homeDir: "/home/me" }).unresolved).toHaveLength(1);
    expect(analyze("echo x > s; bash ../project/s", { homeDir: "/home/me" }).unresolved).toEqual([]);
  });

  it("leaves a run alone when nothing in the command may write files", async () => {
    const analyze = await shellAnalyzer();
    for (const command of ["ls; ./build.sh", "grep -r x . > out.txt; bash build.sh", "sort x | wc -l; ./t"])
      expect(analyze(command, options).unresolved).toEqual([]);
  });
});
