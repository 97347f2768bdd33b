import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHROMIUM_PATH,
  chromiumInstalled,
  type OpenedPage,
  openInChromium,
} from "../../test-support/chromium.ts";
import { runCliProcess } from "../../test-support/run-cli.ts";

/** Set to a path (e.g. docs/replay-report.png at the repository root) to keep the screenshot for the README. */
const KEEP_SCREENSHOT = process.env.UNFORGET_REPORT_SCREENSHOT;

const available = chromiumInstalled();
if (!available) {
  console.warn(
    `Skipping the report's browser test: ${CHROMIUM_PATH} is missing. Install Debian's chromium (apt-get install -y chromium; .ci/run does it) to run it.`,
  );
}

describe.skipIf(!available)("the HTML report in headless Chromium", () => {
  const scratch = mkdtempSync(join(tmpdir(), "unforget-report-"));
  const report = join(scratch, "report.html");
  let stats: { calls: number; compactions: number; layerActions: number };
  let opened: OpenedPage;

  beforeAll(async () => {
    const home = join(scratch, "home");
    mkdirSync(home);
    const result = await runCliProcess(["replay", "--window", "16K", "--json", "--report", report], {
      env: { HOME: home },
    });
    expect(result.code).toBe(0);
    stats = JSON.parse(result.stdout);
    opened = await openInChromium(report);
    await opened.page.waitForSelector("body[data-chart-ready=true]", { timeout: 30_000 });
  });

  afterAll(async () => {
    await opened?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("draws the chart with every line, without the network", async () => {
    const chart = await opened.page.evaluate(() => {
      const replayChart = (
        window as unknown as { replayChart: { data: { datasets: { label: string; type: string }[] } } }
      ).replayChart;
      const canvas = document.getElementById("chart") as HTMLCanvasElement;
      const pixels = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let index = 3; index < pixels.length; index += 4) if (pixels[index]! > 0) painted++;
      return {
        labels: replayChart.data.datasets.map((dataset) => dataset.label),
        width: canvas.width,
        height: canvas.height,
        painted,
      };
    });
    expect(chart.width).toBeGreaterThan(600);
    expect(chart.height).toBeGreaterThan(300);
    expect(chart.painted).toBeGreaterThan(chart.width * chart.height * 0.05);
    for (const line of [
      "context sent (Unforget)",
      "no management (naive)",
      "compaction threshold",
      "working set ceiling",
      "working set floor",
    ]) {
      expect(chart.labels).toContain(line);
    }
    expect(chart.labels.some((label) => label.startsWith("window ("))).toBe(true);
    expect(opened.outsideRequests).toEqual([]);
  });

  it("marks every compaction on the chart and lists it", async () => {
    const marks = await opened.page.evaluate(() => {
      const replayChart = (
        window as unknown as {
          replayChart: {
            data: { datasets: { type: string; data: unknown[] }[] };
            getDatasetMeta(index: number): { data: { x: number; y: number; height: number }[] };
          };
        }
      ).replayChart;
      const drawn: { x: number; y: number; height: number }[] = [];
      replayChart.data.datasets.forEach((dataset, index) => {
        if (dataset.type !== "bar") return;
        const elements = replayChart.getDatasetMeta(index).data;
        dataset.data.forEach((value, position) => {
          if (value !== null) drawn.push(elements[position]!);
        });
      });
      return { drawn, rows: document.querySelectorAll("#actions tbody tr").length };
    });
    expect(stats.compactions).toBeGreaterThan(0);
    expect(stats.layerActions).toBeGreaterThan(10);
    expect(marks.rows).toBe(stats.layerActions);
    expect(marks.drawn.length).toBeGreaterThan(0);
    for (const bar of marks.drawn) {
      expect(Number.isFinite(bar.x) && Number.isFinite(bar.y)).toBe(true);
      expect(Math.abs(bar.height)).toBeGreaterThanOrEqual(3);
    }
  });

  it("shows every bar whole: the y-axis reaches above the highest one", async () => {
    const axis = await opened.page.evaluate(() => {
      const replayChart = (
        window as unknown as {
          replayChart: {
            data: { datasets: { type: string; data: (number[] | number | null)[] }[] };
            scales: { y: { max: number } };
          };
        }
      ).replayChart;
      const tops = replayChart.data.datasets
        .filter((dataset) => dataset.type === "bar")
        .flatMap((dataset) => dataset.data.flatMap((value) => (Array.isArray(value) ? [value[1]!] : [])));
      return { max: replayChart.scales.y.max, highestBar: Math.max(...tops) };
    });
    expect(axis.highestBar).toBeGreaterThan(0);
    expect(axis.max).toBeGreaterThanOrEqual(axis.highestBar);
  });

  it("explains a compaction on hover", async () => {
    const { page } = opened;
    const target = await page.evaluate(() => {
      const replayChart = (
        window as unknown as {
          replayChart: {
            canvas: HTMLCanvasElement;
            data: { datasets: { type: string; label: string; data: unknown[] }[] };
            getDatasetMeta(index: number): { data: { x: number; y: number }[] };
          };
        }
      ).replayChart;
      // A summary when there is one (its explanation is the richest), else any layer; the last of them, in the
      // right half of the chart, so the explanation opens leftwards over the history.
      const bars = replayChart.data.datasets.flatMap((dataset, datasetIndex) =>
        dataset.type === "bar" ? [datasetIndex] : [],
      );
      const index =
        bars.find((datasetIndex) => replayChart.data.datasets[datasetIndex]!.label === "Summary") ?? bars[0]!;
      const position = replayChart.data.datasets[index]!.data.findLastIndex((value) => value !== null);
      const element = replayChart.getDatasetMeta(index).data[position]!;
      const box = replayChart.canvas.getBoundingClientRect();
      return {
        x: box.left + element.x,
        y: box.top + element.y,
        call: position + 1,
        layer: replayChart.data.datasets[index]!.label,
      };
    });
    await page.mouse.move(target.x, target.y);
    await page.waitForFunction(() => document.getElementById("tooltip")!.style.opacity === "1");
    const text = (await page.locator("#tooltip").textContent()) ?? "";
    expect(text).toContain(`call ${target.call} of ${stats.calls}`);
    expect(text).toMatch(new RegExp(`${target.layer} · [\\d,]+ → [\\d,]+ tokens`));
    if (target.layer === "Summary")
      expect(text).toMatch(/Summarised \d+ messages by the extractive summariser/);
    else expect(text).toMatch(/(Cleared|Folded|Cut|Saved|Snipped|Masked) /);
    const shot = join(scratch, "report.png");
    await page.screenshot({ path: shot });
    if (KEEP_SCREENSHOT) {
      mkdirSync(dirname(resolve(KEEP_SCREENSHOT)), { recursive: true });
      copyFileSync(shot, resolve(KEEP_SCREENSHOT));
    }
  });
});
