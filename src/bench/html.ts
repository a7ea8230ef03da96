import type { BenchJson } from "./report.js";
import { formatTable, plural, reportFooter } from "./report.js";
import type { BenchResult } from "./run-bench.js";

// `snowpea bench --html FILE`: one self-contained page (no external assets, works offline) with the summary table
// and, per trajectory (a selector), three per-round charts drawn as inline SVG: tokens sent, cached share of them,
// and cumulative cost — one line per policy.

/** The per-round figures the page draws, compact: per policy, per trajectory, three arrays over requests. */
interface PageData {
	files: { file: string; rounds: number }[];
	policies: string[];
	/** series[policy][trajectory] = [tokens sent, cached tokens, cost of the request in micro-dollars]. */
	series: [number[], number[], number[]][][];
}

function pageData(result: BenchResult): PageData {
	return {
		files: result.trajectories,
		policies: result.policies.map((policy) => policy.name),
		series: result.policies.map((policy) =>
			policy.runs.map((run) => [
				run.requests.map((request) => request.tokens),
				run.requests.map((request) => request.cacheRead),
				run.requests.map((request) => Math.round(request.cost * 1e6)),
			]),
		),
	};
}

function escapeHtml(text: string): string {
	return text.replace(/[&<>"]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** JSON that is safe inside a <script> element. */
function scriptJson(value: unknown): string {
	return JSON.stringify(value)
		.replace(/</g, "\\u003c")
		.replace(/\u2028/g, "\\u2028")
		.replace(/\u2029/g, "\\u2029");
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:20px 0 6px}
pre{background:#f5f6f8;padding:12px;overflow-x:auto;font-size:12.5px;border-radius:6px}
.note{color:#555;font-size:12.5px;margin:2px 0}
select{font-size:14px;padding:3px 6px;max-width:100%}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:14px;height:3px;margin-right:5px;vertical-align:middle}
svg{display:block;width:100%;height:auto;background:#fbfbfc;border:1px solid #e4e6eb;border-radius:6px}
svg text{font-size:11px;fill:#555}
`;

const SCRIPT = `
const data = JSON.parse(document.getElementById("bench-data").textContent);
const colours = ["#444","#1f77b4","#2ca02c","#9467bd","#d62728","#ff7f0e","#17becf","#8c564b","#e377c2"];
const reference = (p) => (data.policies[p] === "off" || data.policies[p] === "oracle" ? 1 : 0);
const select = document.getElementById("trajectory");
data.files.forEach((f, i) => { const o = document.createElement("option"); o.value = i; o.textContent = f.file + " (" + f.rounds + " rounds)"; select.appendChild(o); });
document.getElementById("legend").innerHTML = data.policies.map((p, i) =>
  '<span><i style="background:' + colours[i % colours.length] + '"></i>' + p + (reference(i) ? " (dashed)" : "") + '</span>').join("");
function chart(id, lines, format, maxOverride) {
  const W = 1000, H = 260, L = 70, R = 12, T = 12, B = 28;
  let n = 0, max = 0;
  for (const line of lines) { n = Math.max(n, line.length); for (const v of line) max = Math.max(max, v); }
  if (maxOverride !== undefined) max = maxOverride;
  else if (max > 0) { const raw = max / 4, unit = Math.pow(10, Math.floor(Math.log10(raw))); max = 4 * unit * ([1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((m) => m * unit >= raw) || 10); }
  if (max <= 0) max = 1;
  const x = (i) => L + (n <= 1 ? 0 : (i * (W - L - R)) / (n - 1));
  const y = (v) => T + (H - T - B) * (1 - v / max);
  let svg = '<svg viewBox="0 0 ' + W + ' ' + H + '" xmlns="http://www.w3.org/2000/svg">';
  for (let g = 0; g <= 4; g++) {
    const v = (max * g) / 4, yy = y(v);
    svg += '<line x1="' + L + '" x2="' + (W - R) + '" y1="' + yy + '" y2="' + yy + '" stroke="#e4e6eb"/>';
    svg += '<text x="' + (L - 6) + '" y="' + (yy + 4) + '" text-anchor="end">' + format(v) + '</text>';
  }
  const step = Math.max(1, Math.ceil(n / 10));
  for (let i = 0; i < n; i += step) svg += '<text x="' + x(i) + '" y="' + (H - 8) + '" text-anchor="middle">' + (i + 1) + '</text>';
  // reference lines (off, oracle) dashed and drawn last, so that no policy hides them
  const order = lines.map((_, p) => p).sort((a, b) => reference(a) - reference(b));
  for (const p of order) {
    const line = lines[p];
    if (!line.length) continue;
    const points = line.map((v, i) => x(i).toFixed(1) + "," + y(v).toFixed(1)).join(" ");
    svg += '<polyline fill="none" stroke-width="1.6"' + (reference(p) ? ' stroke-dasharray="6 3"' : "") + ' stroke="' + colours[p % colours.length] + '" points="' + points + '"><title>' + data.policies[p] + '</title></polyline>';
  }
  document.getElementById(id).innerHTML = svg + "</svg>";
}
const kilo = (v) => v >= 1e6 ? (v / 1e6).toFixed(1) + "M" : v >= 1e3 ? (v / 1e3).toFixed(0) + "K" : String(Math.round(v));
function draw() {
  const t = Number(select.value);
  const runs = data.series.map((perFile) => perFile[t] || [[], [], []]);
  chart("tokens", runs.map((r) => r[0]), kilo);
  chart("cached", runs.map((r) => r[0].map((v, i) => (v > 0 ? r[1][i] / v : 0))), (v) => Math.round(v * 100) + "%", 1);
  chart("cost", runs.map((r) => { let s = 0; return r[2].map((v) => (s += v / 1e6)); }), (v) => "$" + v.toFixed(v >= 10 ? 0 : v >= 0.1 || v === 0 ? 2 : 3));
}
select.addEventListener("change", draw);
draw();
`;

/** The whole page. Pure. */
export function benchHtml(result: BenchResult, document: BenchJson): string {
	const title = `snowpea bench — ${plural(document.corpus.files, "trajectory", "trajectories")}, ${document.prices.name}`;
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<pre>${escapeHtml(formatTable(document))}</pre>
<h2>Per round</h2>
<p><label>Trajectory <select id="trajectory"></select></label></p>
<div class="legend" id="legend"></div>
<h2>Tokens sent per request</h2>
<div id="tokens"></div>
<h2>Cached share of the tokens sent</h2>
<div id="cached"></div>
<h2>Cumulative cost (prompt + output)</h2>
<div id="cost"></div>
${[...reportFooter(document), ...document.corpus.skipped.map((problem) => `skipped ${problem}`)]
	.map((line) => `<p class="note">${escapeHtml(line)}</p>`)
	.join("\n")}
<script type="application/json" id="bench-data">${scriptJson(pageData(result))}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
