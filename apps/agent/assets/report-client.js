// Draws the replay chart of an `unforget replay --report` page. Runs in the browser with Chart.js loaded
// (window.Chart) and the replay data in <script id="replay-data">. No network, no other dependency.
(() => {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const calls = data.tokens.length;
  const labels = Array.from({ length: calls }, (_, index) => index + 1);
  const format = (value) => Math.round(value).toLocaleString("en-US");
  const dollars = (value) => `$${value.toFixed(Math.abs(value) >= 1 ? 2 : 4)}`;
  const cumulative = (values) => {
    let total = 0;
    return values.map((value) => (total += value));
  };
  const spent = cumulative(data.costUsd);
  const referenceSpent = cumulative(data.referenceUsd);
  const byCall = new Map();
  for (const note of data.actions) {
    const list = byCall.get(note.call) ?? [];
    list.push(note);
    byCall.set(note.call, list);
  }
  const layers = [...new Set(data.actions.map((note) => note.layer))];
  const labelOf = (layer) => data.layers[layer]?.label ?? layer;
  const colorOf = (layer) => data.layers[layer]?.color ?? "#475569";
  const barThickness = Math.max(3, Math.min(12, Math.floor(900 / Math.max(1, calls))));
  const layerDatasets = layers.map((layer) => {
    const bars = new Array(calls).fill(null);
    for (const note of data.actions) {
      if (note.layer !== layer) continue;
      const current = bars[note.call - 1];
      bars[note.call - 1] = current
        ? [Math.min(current[0], note.low), Math.max(current[1], note.high)]
        : [note.low, note.high];
    }
    return {
      type: "bar",
      label: labelOf(layer),
      data: bars,
      backgroundColor: `${colorOf(layer)}cc`,
      borderColor: colorOf(layer),
      borderWidth: 1,
      borderSkipped: false,
      borderRadius: 2,
      barThickness,
      minBarLength: 4,
      grouped: false,
      order: 0,
    };
  });
  const constant = (value) => new Array(calls).fill(value);
  // The bars reach what a request would have been before the layers acted: the axis shows them whole.
  const highest = Math.max(...data.tokens, ...data.threshold, ...data.actions.map((note) => note.high));
  const yMax = Math.max(data.window, highest) * 1.12;
  const canvas = document.getElementById("chart");
  const tooltip = document.getElementById("tooltip");
  const escapeHtml = (text) =>
    String(text).replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

  function renderTooltip(context) {
    const model = context.tooltip;
    if (model.opacity === 0 || model.dataPoints.length === 0) {
      tooltip.style.opacity = "0";
      return;
    }
    const index = model.dataPoints[0].dataIndex;
    const call = index + 1;
    const rows = [
      ["sent", `${format(data.tokens[index])} tokens`],
      ["cache read / written", `${format(data.cacheRead[index])} / ${format(data.cacheWrite[index])}`],
      ["this call", dollars(data.costUsd[index])],
      ["spent so far", `${dollars(spent[index])} (no compaction: ${dollars(referenceSpent[index])})`],
      ["unmanaged", `${format(data.naive[index])} tokens`],
      ["threshold", format(data.threshold[index])],
      ...(data.ceiling[index] === null ? [] : [["working set ceiling", format(data.ceiling[index])]]),
      ...(data.floor[index] === null ? [] : [["working set floor", format(data.floor[index])]]),
    ];
    let html = `<div class="title">call ${call} of ${calls}</div>`;
    html += rows
      .map(([name, value]) => `<div class="row"><span>${name}</span><span>${value}</span></div>`)
      .join("");
    for (const note of byCall.get(call) ?? []) {
      html += `<div class="compaction"><div><span class="swatch" style="background:${colorOf(note.layer)}"></span><b>${escapeHtml(labelOf(note.layer))}</b> · ${format(note.tokensBefore)} → ${format(note.tokensAfter)} tokens (the manager's count)</div><div class="what">${escapeHtml(note.description)}</div>`;
      if (note.summaryExcerpt)
        html += `<div class="excerpt">${escapeHtml(note.summaryExcerpt.slice(0, 180))}</div>`;
      html += "</div>";
    }
    tooltip.innerHTML = html;
    const box = canvas.parentElement;
    const left = box.offsetLeft + model.caretX;
    const flip = model.caretX > box.clientWidth * 0.6;
    tooltip.style.left = `${flip ? left - tooltip.offsetWidth - 14 : left + 14}px`;
    // Below the legend, so the lines' names stay readable while a call is explained.
    const highest = context.chart.chartArea.top;
    const top = Math.max(highest, Math.min(model.caretY - 40, box.clientHeight - tooltip.offsetHeight));
    tooltip.style.top = `${box.offsetTop + top}px`;
    tooltip.style.opacity = "1";
  }

  const chart = new window.Chart(canvas, {
    data: {
      labels,
      datasets: [
        {
          type: "line",
          label: "context sent (Unforget)",
          data: data.tokens,
          borderColor: "#2563eb",
          backgroundColor: "rgba(37, 99, 235, 0.10)",
          fill: "origin",
          borderWidth: 2,
          pointRadius: 0,
          pointHoverRadius: 4,
          tension: 0,
          order: 1,
        },
        {
          type: "line",
          label: "no management (naive)",
          data: data.naive,
          borderColor: "#94a3b8",
          borderDash: [6, 4],
          borderWidth: 1.5,
          pointRadius: 0,
          pointHoverRadius: 3,
          order: 2,
        },
        {
          type: "line",
          label: "compaction threshold",
          data: data.threshold,
          borderColor: "#f59e0b",
          borderDash: [3, 3],
          borderWidth: 1.5,
          pointRadius: 0,
          pointHoverRadius: 0,
          stepped: true,
          order: 3,
        },
        ...(data.ceiling.some((value) => value !== null)
          ? [
              {
                type: "line",
                label: "working set ceiling",
                data: data.ceiling,
                borderColor: "#0d9488",
                borderDash: [8, 3],
                borderWidth: 1.5,
                pointRadius: 0,
                pointHoverRadius: 0,
                stepped: true,
                spanGaps: false,
                order: 3,
              },
              {
                type: "line",
                label: "working set floor",
                data: data.floor,
                borderColor: "#65a30d",
                borderDash: [2, 3],
                borderWidth: 1.5,
                pointRadius: 0,
                pointHoverRadius: 0,
                stepped: true,
                spanGaps: false,
                order: 3,
              },
            ]
          : []),
        {
          type: "line",
          label: `window (${format(data.window)})`,
          data: constant(data.window),
          borderColor: "#dc2626",
          borderWidth: 1.5,
          pointRadius: 0,
          pointHoverRadius: 0,
          order: 4,
        },
        {
          type: "line",
          label: "input cost so far (Unforget)",
          data: spent,
          yAxisID: "cost",
          borderColor: "#be185d",
          borderWidth: 2,
          pointRadius: 0,
          pointHoverRadius: 3,
          order: 5,
        },
        {
          type: "line",
          label: "input cost so far, no compaction",
          data: referenceSpent,
          yAxisID: "cost",
          borderColor: "#be185d",
          borderDash: [2, 3],
          borderWidth: 1.5,
          pointRadius: 0,
          pointHoverRadius: 3,
          order: 6,
        },
        ...layerDatasets,
      ],
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: "index", axis: "x", intersect: false },
      scales: {
        x: {
          title: { display: true, text: "model call" },
          ticks: { autoSkip: true, maxTicksLimit: 16, maxRotation: 0 },
          grid: { display: false },
        },
        y: {
          min: 0,
          max: yMax,
          title: { display: true, text: "context tokens" },
          ticks: { callback: (value) => (value >= 1000 ? `${Math.round(value / 1000)}K` : value) },
        },
        cost: {
          position: "right",
          min: 0,
          title: { display: true, text: "input cost so far (US$)" },
          grid: { drawOnChartArea: false },
          ticks: { callback: (value) => `$${value}` },
        },
      },
      plugins: {
        legend: { position: "top", labels: { usePointStyle: true, boxHeight: 8 } },
        tooltip: { enabled: false, external: renderTooltip },
      },
    },
  });
  canvas.addEventListener("mouseleave", () => {
    tooltip.style.opacity = "0";
  });
  window.replayChart = chart;
  document.body.dataset.chartReady = "true";
})();
