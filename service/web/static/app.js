// Suanli page: the form posts to /v1/recommend and draws the answer (table + cost-time
// scatter with the Pareto front) with plain DOM calls. No library, no inline script or
// style (the page runs under Content-Security-Policy: default-src 'self'), and every
// string from the API is set with textContent, never parsed as HTML.
"use strict";

// Every string of the page, in English and Chinese side by side: [en, zh].
const TEXT = {
  tagline: [
    "Which cloud server to rent for a deep-learning job, and what it costs.",
    "深度学习任务该租哪台云服务器、要花多少钱。",
  ],
  language: ["Language", "语言"],
  workload: ["Workload", "任务"],
  kind: ["Job", "类型"],
  kind_finetune: ["Fine-tuning", "微调"],
  kind_pretrain: ["Pre-training", "预训练"],
  kind_inference: ["Serving (inference)", "推理服务"],
  kind_preprocess: ["Data preprocessing (CPU)", "数据预处理（CPU）"],
  model: ["Model", "模型"],
  method: ["Method", "方法"],
  method_full: ["Full fine-tuning", "全参数微调"],
  method_freeze: ["Freeze (last layers)", "冻结（只训最后几层）"],
  tokens: ["Training tokens", "训练 token 数"],
  tokens_hint: ["dataset tokens × epochs, e.g. 20M, 3e9, 30B", "数据集 token 数 × 轮数，如 20M、3e9、30B"],
  seq_len: ["Sequence length", "序列长度"],
  context_len: ["Context length (tokens)", "上下文长度（token）"],
  concurrency: ["Concurrent sequences", "并发序列数"],
  output_tokens: ["Tokens to generate", "生成 token 总数"],
  data_gb: ["Data size (GB)", "数据量（GB）"],
  constraints: ["Constraints", "约束"],
  providers: ["Clouds", "云厂商"],
  accelerators: ["Accelerators", "加速卡"],
  max_price: ["Max price (CNY/h)", "最高单价（元/小时）"],
  budget: ["Budget (CNY)", "预算（元）"],
  deadline: ["Deadline (hours)", "截止时间（小时）"],
  objective: ["Rank by", "排序依据"],
  objective_cost: ["Total cost", "总成本"],
  objective_time: ["Time", "时间"],
  objective_balanced: ["Balanced", "均衡"],
  top_k: ["Options", "方案数"],
  submit: ["Recommend", "推荐"],
  working: ["Asking Suanli…", "正在计算…"],
  chart_title: ["Cost and time", "成本与时间"],
  table_title: ["Ranked options", "推荐方案"],
  advice_title: ["Advice", "建议"],
  api_link: ["API contract (OpenAPI)", "API 契约（OpenAPI）"],
  col_rank: ["#", "#"],
  col_provider: ["Cloud", "云厂商"],
  col_region: ["Region", "地域"],
  col_instance: ["Instance type", "实例规格"],
  col_accelerator: ["Accelerators", "加速卡"],
  col_billing: ["Billing", "计费"],
  col_price: ["Price / h", "单价/小时"],
  col_hours: ["Hours", "小时"],
  col_total: ["Total", "总成本"],
  col_headroom: ["Headroom", "显存余量"],
  col_pareto: ["Pareto", "帕累托"],
  unknown: ["unknown", "未知"],
  estimated: ["estimated", "估算"],
  any_region: ["any", "不限"],
  cpu_only: ["CPU only", "仅 CPU"],
  on_demand: ["on demand", "按量"],
  monthly: ["monthly", "包月"],
  spot: ["spot", "竞价"],
  axis_hours: ["Hours (job length)", "时长（小时）"],
  axis_cost: ["Total cost (CNY)", "总成本（元）"],
  legend_front: ["Pareto front (no option both cheaper and faster)", "帕累托前沿（没有既更便宜又更快的方案）"],
  legend_other: ["Other options", "其他方案"],
  not_plotted: [
    "{n} option(s) without a known price or time are not plotted.",
    "{n} 个方案价格或时长未知，未画入图中。",
  ],
  log_scale: ["log scale", "对数坐标"],
  no_options: ["No option fits these constraints.", "没有满足这些约束的方案。"],
  catalogs: ["Catalogs: ", "目录："],
  bad_number: ["{field}: not a number ({value}).", "{field}：不是数字（{value}）。"],
  error: ["The request was refused", "请求被拒绝"],
  network: ["The service did not answer", "服务没有响应"],
};

const SVG_NS = "http://www.w3.org/2000/svg";
const CHART = { width: 720, height: 400, left: 70, right: 20, top: 44, bottom: 50 };
let lang = initialLang();
let lastAnswer = null;

function t(key, values) {
  const pair = TEXT[key];
  let text = pair ? pair[lang === "zh" ? 1 : 0] : key;
  for (const [name, value] of Object.entries(values || {})) {
    text = text.replace(`{${name}}`, String(value));
  }
  return text;
}

function initialLang() {
  const asked = new URLSearchParams(window.location.search).get("lang");
  if (asked === "en" || asked === "zh") return asked;
  return (navigator.language || "").toLowerCase().startsWith("en") ? "en" : "zh";
}

function $(id) { return document.getElementById(id); }

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function applyLanguage() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-i18n]")) {
    node.textContent = t(node.dataset.i18n);
  }
  $("lang").value = lang;
  if (lastAnswer) render(lastAnswer);
}

// "20M", "3e9", "30B", "1.5万" -> a number; null when empty; NaN when unreadable.
function parseAmount(raw) {
  const text = String(raw).trim().replace(/[,_\s]/g, "");
  if (!text) return null;
  const units = { k: 1e3, m: 1e6, b: 1e9, g: 1e9, t: 1e12, "万": 1e4, "亿": 1e8 };
  const match = /^([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)([kmbgt万亿]?)$/i.exec(text);
  if (!match) return NaN;
  return Number(match[1]) * (match[2] ? units[match[2].toLowerCase()] : 1);
}

function numberField(id, label, parse = Number) {
  const raw = $(id).value;
  if (raw === "" || raw === null) return null;
  const value = parse(raw);
  if (value === null) return null;
  if (!Number.isFinite(value)) throw new Error(t("bad_number", { field: t(label), value: raw }));
  return value;
}

function buildRequest() {
  const kind = $("kind").value;
  const workload = { kind };
  if (kind !== "preprocess") workload.model = $("model").value.trim();
  if (kind === "finetune" || kind === "pretrain") {
    const tokens = numberField("tokens", "tokens", parseAmount);
    if (tokens !== null) workload.tokens = tokens;
    const seqLen = numberField("seq_len", "seq_len");
    if (seqLen !== null) workload.seq_len = seqLen;
  }
  if (kind === "finetune") workload.method = $("method").value;
  if (kind === "inference") {
    const fields = [["context_len", "context_len"], ["concurrency", "concurrency"]];
    for (const [id, label] of fields) {
      const value = numberField(id, label);
      if (value !== null) workload[id] = value;
    }
    const output = numberField("output_tokens", "output_tokens", parseAmount);
    if (output !== null) workload.output_tokens = output;
  }
  if (kind === "preprocess") workload.data_gb = numberField("data_gb", "data_gb");
  const constraints = {};
  const providers = [...document.querySelectorAll("#providers input:checked")].map((c) => c.value);
  const all = document.querySelectorAll("#providers input").length;
  if (providers.length && providers.length < all) constraints.providers = providers;
  const accelerators = $("accelerators").value.split(/[,，\s]+/).filter(Boolean);
  if (accelerators.length) constraints.accelerators = accelerators;
  for (const [id, label] of [["max_price_per_hour", "max_price"], ["budget", "budget"],
    ["deadline_hours", "deadline"]]) {
    const value = numberField(id, label);
    if (value !== null) constraints[id] = value;
  }
  const body = { workload, constraints, objective: $("objective").value, lang };
  const topK = numberField("top_k", "top_k");
  if (topK !== null) body.top_k = topK;
  return body;
}

function showKindFields() {
  const kind = $("kind").value;
  for (const node of document.querySelectorAll("[data-for]")) {
    node.hidden = !node.dataset.for.split(" ").includes(kind);
  }
}

function setStatus(text, isError) {
  const status = $("status");
  status.textContent = text;
  status.className = isError ? "error" : "";
}

// The one error shape of the API: {status_code, detail, extra}; items name the field.
function describeError(body) {
  const parts = [body.detail || t("error")];
  if (Array.isArray(body.extra)) {
    for (const item of body.extra) {
      let line = `${item.key}: ${item.message}`;
      if (item.suggestions && item.suggestions.length) line += ` (${item.suggestions.join(", ")})`;
      parts.push(line);
    }
  }
  return parts.join(" — ");
}

async function submit(event) {
  event.preventDefault();
  let request;
  try {
    request = buildRequest();
  } catch (error) {
    setStatus(error.message, true);
    return;
  }
  const button = $("submit");
  button.disabled = true;
  setStatus(t("working"), false);
  try {
    const response = await fetch("/v1/recommend", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(request),
    });
    const body = await response.json();
    if (!response.ok) {
      setStatus(`${t("error")} (${response.status}): ${describeError(body)}`, true);
      return;
    }
    setStatus("", false);
    lastAnswer = body;
    render(body);
  } catch (error) {
    setStatus(`${t("network")}: ${error.message}`, true);
  } finally {
    button.disabled = false;
  }
}

function money(value) {
  if (value === null || value === undefined) return null;
  const digits = value >= 100 ? 0 : 2;
  return "¥" + value.toLocaleString(lang === "zh" ? "zh-CN" : "en-US",
    { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function number(value, digits = 1) {
  if (value === null || value === undefined) return null;
  return value.toLocaleString(lang === "zh" ? "zh-CN" : "en-US",
    { maximumFractionDigits: digits });
}

function cell(row, value, className) {
  const td = el("td", value === null ? t("unknown") : value, className);
  if (value === null) td.classList.add("unknown");
  row.appendChild(td);
  return td;
}

// A price for one region, or (region null) one price wherever the type is sold.
function regionText(option) {
  if (option.region !== null) return option.region;
  const known = option.regions;
  if (!known.length) return t("any_region");
  return known.length > 1 ? `${known[0]} +${known.length - 1}` : known[0];
}

function render(answer) {
  $("result").hidden = false;
  $("summary").textContent = answer.summary;
  const warnings = $("warnings");
  warnings.replaceChildren(...answer.warnings.map((w) => el("li", w)));
  const tbody = $("options").querySelector("tbody");
  tbody.replaceChildren();
  for (const option of answer.options) {
    const row = el("tr");
    row.dataset.rank = option.rank;
    if (option.pareto) row.classList.add("pareto");
    cell(row, option.rank, "num");
    cell(row, option.provider);
    const regions = cell(row, regionText(option));
    regions.title = option.regions.join(", ");
    cell(row, option.instance_type);
    const acc = option.accelerator;
    const accText = acc ? `${acc.count} × ${acc.name}` : t("cpu_only");
    cell(row, option.nodes > 1 ? `${option.nodes} × (${accText})` : accText);
    cell(row, t(option.billing));
    const price = cell(row, money(option.price_per_hour), "num price");
    if (option.price_estimated && option.price_per_hour !== null) {
      price.textContent = `≈ ${price.textContent} (${t("estimated")})`;
      price.classList.add("estimated");
    }
    cell(row, number(option.hours), "num");
    cell(row, money(option.total_cost), "num total");
    cell(row, option.headroom_gib === null ? null : `${number(option.headroom_gib)} GiB`, "num");
    cell(row, option.pareto ? "★" : "");
    tbody.appendChild(row);
  }
  if (!answer.options.length) {
    const row = el("tr");
    const td = el("td", t("no_options"));
    td.colSpan = 11;
    row.appendChild(td);
    tbody.appendChild(row);
  }
  $("advice").replaceChildren(...answer.advice.map((a) => el("li", a.text)));
  $("catalogs").textContent = t("catalogs") + answer.catalogs
    .map((c) => `${c.provider} ${c.prices_as_of || c.as_of}`).join(" · ");
  drawChart($("chart"), answer.options);
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

// A linear or (when values span more than 30x) log10 scale onto [low, high] pixels.
function scale(values, low, high) {
  let min = Math.min(...values);
  let max = Math.max(...values);
  const log = min > 0 && max / min > 30;
  const f = log ? Math.log10 : (v) => v;
  if (min === max) { min = min * 0.9; max = max * 1.1 || 1; }
  let a = f(min);
  let b = f(max);
  const pad = (b - a) * 0.06;
  a -= pad; b += pad;
  const map = (v) => low + ((f(v) - a) / (b - a)) * (high - low);
  const ticks = [];
  if (log) {
    for (let e = Math.floor(a); e <= Math.ceil(b); e++) {
      for (const m of [1, 2, 5]) {
        const v = m * 10 ** e;
        if (f(v) >= a && f(v) <= b) ticks.push(v);
      }
    }
  } else {
    const step = niceStep((b - a) / 6);
    for (let v = Math.ceil(a / step) * step; v <= b; v += step) ticks.push(Number(v.toPrecision(6)));
  }
  return { map, ticks, log };
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function drawChart(root, options) {
  root.replaceChildren();
  const plotted = options.filter((o) => o.hours !== null && o.total_cost !== null);
  const skipped = options.length - plotted.length;
  const caption = [];
  if (skipped) caption.push(t("not_plotted", { n: skipped }));
  const { width, height, left, right, top, bottom } = CHART;
  if (!plotted.length) {
    $("chart-caption").textContent = caption.join(" ");
    return;
  }
  const x = scale(plotted.map((o) => o.hours), left, width - right);
  const y = scale(plotted.map((o) => o.total_cost), height - bottom, top);
  for (const v of x.ticks) {
    const px = x.map(v);
    root.appendChild(svg("line", { class: "grid", x1: px, x2: px, y1: top, y2: height - bottom }));
    root.appendChild(svg("text", { x: px, y: height - bottom + 16, "text-anchor": "middle" },
      number(v, 2)));
  }
  for (const v of y.ticks) {
    const py = y.map(v);
    root.appendChild(svg("line", { class: "grid", x1: left, x2: width - right, y1: py, y2: py }));
    root.appendChild(svg("text", { x: left - 6, y: py + 4, "text-anchor": "end" }, money(v)));
  }
  root.appendChild(svg("line", { class: "axis", x1: left, x2: width - right,
    y1: height - bottom, y2: height - bottom }));
  root.appendChild(svg("line", { class: "axis", x1: left, x2: left, y1: top, y2: height - bottom }));
  const xLabel = t("axis_hours") + (x.log ? ` (${t("log_scale")})` : "");
  const yLabel = t("axis_cost") + (y.log ? ` (${t("log_scale")})` : "");
  root.appendChild(svg("text", { class: "label", x: (left + width - right) / 2, y: height - 12,
    "text-anchor": "middle" }, xLabel));
  root.appendChild(svg("text", { class: "label", x: 14, y: (top + height - bottom) / 2,
    "text-anchor": "middle", transform: `rotate(-90 14 ${(top + height - bottom) / 2})` }, yLabel));
  const front = plotted.filter((o) => o.pareto).sort((a, b) => a.hours - b.hours);
  if (front.length > 1) {
    const points = front.map((o) => `${x.map(o.hours)},${y.map(o.total_cost)}`).join(" ");
    root.appendChild(svg("polyline", { class: "front", points }));
  }
  for (const o of [...plotted].sort((a, b) => Number(a.pareto) - Number(b.pareto))) {
    const dot = svg("circle", { class: o.pareto ? "pt pareto" : "pt", cx: x.map(o.hours),
      cy: y.map(o.total_cost), r: o.pareto ? 6 : 4.5, "data-rank": o.rank });
    dot.appendChild(svg("title", {}, `#${o.rank} ${o.provider} ${o.instance_type}: ` +
      `${money(o.total_cost)}, ${number(o.hours)} h`));
    root.appendChild(dot);
  }
  const legendY = 14;
  root.appendChild(svg("circle", { class: "pt pareto", cx: left + 6, cy: legendY, r: 6 }));
  root.appendChild(svg("text", { x: left + 16, y: legendY + 4 }, t("legend_front")));
  root.appendChild(svg("circle", { class: "pt", cx: left + 366, cy: legendY, r: 4.5 }));
  root.appendChild(svg("text", { x: left + 376, y: legendY + 4 }, t("legend_other")));
  $("chart-caption").textContent = caption.join(" ");
}

async function loadChoices() {
  try {
    const models = await (await fetch("/v1/models")).json();
    $("models").replaceChildren(...models.map((m) => {
      const option = el("option");
      option.value = m.id;
      option.textContent = `${m.display_name} (${m.params_b}B)`;
      return option;
    }));
  } catch (error) { /* the input still accepts any preset id */ }
  try {
    const providers = await (await fetch("/v1/providers")).json();
    $("providers").replaceChildren(...providers.filter((p) => p.status === "loaded").map((p) => {
      const label = el("label");
      const box = el("input");
      box.type = "checkbox";
      box.value = p.name;
      box.checked = true;
      label.append(box, document.createTextNode(p.display_name || p.name));
      return label;
    }));
  } catch (error) { /* no provider filter then */ }
}

document.addEventListener("DOMContentLoaded", () => {
  $("lang").addEventListener("change", () => {
    lang = $("lang").value;
    applyLanguage();
    if (lastAnswer) $("job").requestSubmit();
  });
  $("kind").addEventListener("change", showKindFields);
  $("job").addEventListener("submit", submit);
  applyLanguage();
  showKindFields();
  loadChoices().then(() => { document.body.dataset.ready = "1"; });
});
