/**
 * Hand-written SVG line/scatter charts for the benchmark report: linear or
 * log axes with readable ticks, grid, axis titles, point labels and a legend.
 * No chart library and nothing fetched: the output is one self-contained
 * SVG string with a white background (legible in light and dark viewers).
 */

/** A marker shape. */
export type Marker = 'circle' | 'square' | 'triangle' | 'diamond';

/** One data point; `label` is printed next to the marker (e.g. an efSearch value). */
export interface Point {
  x: number;
  y: number;
  label?: string;
}

/** A series: markers, optionally joined by a line. */
export interface Series {
  name: string;
  color: string;
  marker: Marker;
  /** Join the points with a line (in the order given). @default true */
  line?: boolean;
  dashed?: boolean;
  /** Open markers (white inside), so that points on top of each other stay visible. */
  hollow?: boolean;
  points: readonly Point[];
}

/** A legend row; without `marker` and `line` it is a plain caption. */
export interface LegendEntry {
  label: string;
  color: string;
  marker?: Marker;
  line?: boolean;
  dashed?: boolean;
  hollow?: boolean;
}

/** What to draw. */
export interface ChartSpec {
  title: string;
  subtitle?: string;
  xLabel: string;
  yLabel: string;
  xLog?: boolean;
  yLog?: boolean;
  /** Fixed axis ranges; otherwise taken from the data with a margin. */
  xDomain?: readonly [number, number];
  yDomain?: readonly [number, number];
  series: readonly Series[];
  /** Legend rows; by default one per series. */
  legend?: readonly LegendEntry[];
  width?: number;
  height?: number;
}

/** An axis tick: its value and printed label. */
export interface Tick {
  value: number;
  label: string;
}

/** Colour-blind-safe palette (Okabe–Ito, yellow left out: unreadable on white). */
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'] as const;

/** The palette colour for series number `i` (wraps around). */
export function colour(i: number): string {
  return PALETTE[((i % PALETTE.length) + PALETTE.length) % PALETTE.length]!;
}

/** Escapes text for SVG/XML content and attribute values. */
export function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/**
 * A short label for a tick value: 3 significant digits, k/M for thousands/millions.
 * @example
 * formatTick(0.05); // '0.05'
 * formatTick(20000); // '20k'
 */
export function formatTick(value: number): string {
  const trim = (v: number): string => String(Number(v.toPrecision(3)));
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${trim(value / 1e9)}G`;
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e3) return `${trim(value / 1e3)}k`;
  return trim(value);
}

/**
 * Ticks on a linear axis at 1, 2 or 5 × 10^k steps, about `target` of them, inside [min, max].
 * @example
 * linearTicks(0.9, 1, 5).map((t) => t.label); // ['0.9', '0.92', '0.94', '0.96', '0.98', '1']
 */
export function linearTicks(min: number, max: number, target = 6): Tick[] {
  if (!(max > min)) return [{ value: min, label: formatTick(min) }];
  const raw = (max - min) / Math.max(1, target);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * power >= raw - 1e-12) ?? 10) * power;
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const out: Tick[] = [];
  for (let v = Math.ceil(min / step - 1e-9) * step; v <= max + step * 1e-9; v += step) {
    const value = Number(v.toFixed(decimals));
    out.push({ value, label: formatTick(value) });
  }
  return out;
}

/**
 * Ticks on a log axis inside [min, max] (both > 0): every 1, 2, 5 × 10^k for
 * narrow ranges, fewer per decade as the range widens.
 * @example
 * logTicks(0.3, 120).map((t) => t.label); // ['0.5', '1', '2', '5', '10', '20', '50', '100']
 */
export function logTicks(min: number, max: number): Tick[] {
  if (!(min > 0) || !(max > min)) return min > 0 ? [{ value: min, label: formatTick(min) }] : [];
  const decades = Math.log10(max / min);
  const multipliers = decades <= 1 ? [1, 1.5, 2, 3, 5, 7] : decades <= 4 ? [1, 2, 5] : decades <= 6 ? [1, 3] : [1];
  const out: Tick[] = [];
  for (let k = Math.floor(Math.log10(min)); k <= Math.ceil(Math.log10(max)); k++) {
    for (const m of multipliers) {
      const value = Number((m * 10 ** k).toPrecision(6));
      if (value >= min * (1 - 1e-9) && value <= max * (1 + 1e-9)) out.push({ value, label: formatTick(value) });
    }
  }
  return out;
}

/** Maps data values to pixels along one axis. */
export interface Scale {
  (value: number): number;
  readonly domain: readonly [number, number];
  readonly log: boolean;
  readonly ticks: readonly Tick[];
}

/**
 * A linear or log scale from `domain` onto the pixel interval `range`.
 * @example
 * const x = scale([1, 100], [0, 200], true);
 * x(10); // 100
 */
export function scale(domain: readonly [number, number], range: readonly [number, number], log = false): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const t = log ? (v: number): number => Math.log10(v) : (v: number): number => v;
  const a = t(d0);
  const span = t(d1) - a || 1;
  const fn = (value: number): number => r0 + ((t(value) - a) / span) * (r1 - r0);
  return Object.assign(fn, { domain, log, ticks: log ? logTicks(d0, d1) : linearTicks(d0, d1) });
}

/** True when a point can be drawn on the given axes (finite, and positive on a log axis). */
export function drawable(p: Point, xLog: boolean, yLog: boolean): boolean {
  return Number.isFinite(p.x) && Number.isFinite(p.y) && (!xLog || p.x > 0) && (!yLog || p.y > 0);
}

/**
 * The data range of `values` widened by a margin: 6% of the span on a linear
 * axis, 6% of the span in decades on a log axis (at least a few percent when all values are equal).
 */
export function paddedDomain(values: readonly number[], log: boolean): [number, number] {
  const usable = values.filter((v) => Number.isFinite(v) && (!log || v > 0));
  if (usable.length === 0) return log ? [1, 10] : [0, 1];
  const lo = Math.min(...usable);
  const hi = Math.max(...usable);
  if (log) {
    const decades = Math.max(Math.log10(hi / lo), 0.5);
    const pad = 10 ** (decades * 0.06);
    return [lo / pad, hi * pad];
  }
  const span = hi - lo || Math.abs(hi) * 0.1 || 1;
  return [lo - span * 0.06, hi + span * 0.06];
}

const FONT = 'system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif';

function fmt(n: number): string {
  return String(Math.round(n * 10) / 10);
}

/** SVG for one marker centred at (cx, cy); every marker carries class="pt" (tests count them). */
export function markerSvg(shape: Marker, cx: number, cy: number, color: string, size = 4.5, hollow = false): string {
  const common = hollow
    ? `class="pt" fill="#ffffff" fill-opacity="0.6" stroke="${color}" stroke-width="2"`
    : `class="pt" fill="${color}" stroke="#ffffff" stroke-width="1"`;
  switch (shape) {
    case 'circle':
      return `<circle ${common} cx="${fmt(cx)}" cy="${fmt(cy)}" r="${fmt(size)}"/>`;
    case 'square':
      return `<rect ${common} x="${fmt(cx - size)}" y="${fmt(cy - size)}" width="${fmt(2 * size)}" height="${fmt(2 * size)}"/>`;
    case 'triangle': {
      const s = size * 1.25;
      return `<polygon ${common} points="${fmt(cx)},${fmt(cy - s)} ${fmt(cx + s)},${fmt(cy + s * 0.8)} ${fmt(cx - s)},${fmt(cy + s * 0.8)}"/>`;
    }
    case 'diamond': {
      const s = size * 1.3;
      return `<polygon ${common} points="${fmt(cx)},${fmt(cy - s)} ${fmt(cx + s)},${fmt(cy)} ${fmt(cx)},${fmt(cy + s)} ${fmt(cx - s)},${fmt(cy)}"/>`;
    }
  }
}

/** Rough width in pixels of `text` at `fontSize` (sans-serif averages ~0.56 em per character). */
function textWidth(text: string, fontSize: number): number {
  return text.length * fontSize * 0.56;
}

/**
 * Renders the chart as a standalone SVG document.
 * @example
 * const svg = renderChart({ title: 'p50', xLabel: 'n', yLabel: 'ms', xLog: true, series: [{ name: 'scan', color: colour(0), marker: 'circle', points: [{ x: 1e4, y: 3 }] }] });
 */
export function renderChart(spec: ChartSpec): string {
  const xLog = spec.xLog ?? false;
  const yLog = spec.yLog ?? false;
  const width = spec.width ?? 880;
  const height = spec.height ?? 500;
  const series = spec.series.map((s) => ({ ...s, points: s.points.filter((p) => drawable(p, xLog, yLog)) }));
  const legend: readonly LegendEntry[] =
    spec.legend ??
    spec.series.map((s) => ({
      label: s.name,
      color: s.color,
      marker: s.marker,
      line: s.line ?? true,
      ...(s.dashed === true ? { dashed: true } : {}),
      ...(s.hollow === true ? { hollow: true } : {}),
    }));
  const legendWidth = Math.min(320, Math.max(130, ...legend.map((e) => textWidth(e.label, 12) + 44)));
  const margin = { top: spec.subtitle === undefined ? 48 : 66, right: legendWidth + 28, bottom: 58, left: 74 };
  const plot = { left: margin.left, top: margin.top, right: width - margin.right, bottom: height - margin.bottom };

  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const ys = series.flatMap((s) => s.points.map((p) => p.y));
  const x = scale(spec.xDomain ?? paddedDomain(xs, xLog), [plot.left, plot.right], xLog);
  const y = scale(spec.yDomain ?? paddedDomain(ys, yLog), [plot.bottom, plot.top], yLog);

  const out: string[] = [];
  const titleId = `t${Math.abs(hash(spec.title)).toString(36)}`;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${titleId}" font-family='${FONT}'>`,
    `<title id="${titleId}">${escapeXml(spec.title)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${plot.left}" y="26" font-size="16" font-weight="600" fill="#111827">${escapeXml(spec.title)}</text>`,
  );
  if (spec.subtitle !== undefined)
    out.push(`<text x="${plot.left}" y="46" font-size="12" fill="#4b5563">${escapeXml(spec.subtitle)}</text>`);

  // Grid and ticks.
  out.push('<g class="grid" stroke="#e5e7eb" stroke-width="1">');
  for (const t of x.ticks)
    out.push(`<line x1="${fmt(x(t.value))}" y1="${plot.top}" x2="${fmt(x(t.value))}" y2="${plot.bottom}"/>`);
  for (const t of y.ticks)
    out.push(`<line x1="${plot.left}" y1="${fmt(y(t.value))}" x2="${plot.right}" y2="${fmt(y(t.value))}"/>`);
  out.push('</g>');
  out.push(
    `<rect x="${plot.left}" y="${plot.top}" width="${fmt(plot.right - plot.left)}" height="${fmt(plot.bottom - plot.top)}" fill="none" stroke="#9ca3af"/>`,
  );
  out.push('<g class="x-ticks" font-size="11" fill="#374151" text-anchor="middle">');
  for (const t of x.ticks) {
    out.push(
      `<line x1="${fmt(x(t.value))}" y1="${plot.bottom}" x2="${fmt(x(t.value))}" y2="${plot.bottom + 5}" stroke="#6b7280"/>`,
    );
    out.push(`<text x="${fmt(x(t.value))}" y="${plot.bottom + 18}">${escapeXml(t.label)}</text>`);
  }
  out.push('</g>');
  out.push('<g class="y-ticks" font-size="11" fill="#374151" text-anchor="end">');
  for (const t of y.ticks) {
    out.push(
      `<line x1="${plot.left - 5}" y1="${fmt(y(t.value))}" x2="${plot.left}" y2="${fmt(y(t.value))}" stroke="#6b7280"/>`,
    );
    out.push(`<text x="${plot.left - 8}" y="${fmt(y(t.value) + 4)}">${escapeXml(t.label)}</text>`);
  }
  out.push('</g>');
  const xTitle = `${spec.xLabel}${xLog ? ' (log scale)' : ''}`;
  const yTitle = `${spec.yLabel}${yLog ? ' (log scale)' : ''}`;
  const midY = (plot.top + plot.bottom) / 2;
  out.push(
    `<text x="${fmt((plot.left + plot.right) / 2)}" y="${height - 16}" font-size="13" fill="#111827" text-anchor="middle">${escapeXml(xTitle)}</text>`,
  );
  out.push(
    `<text x="18" y="${fmt(midY)}" font-size="13" fill="#111827" text-anchor="middle" transform="rotate(-90 18 ${fmt(midY)})">${escapeXml(yTitle)}</text>`,
  );

  // Series: lines first, then markers and labels on top.
  for (const s of series) {
    if ((s.line ?? true) && s.points.length > 1) {
      const path = s.points.map((p) => `${fmt(x(p.x))},${fmt(y(p.y))}`).join(' ');
      out.push(
        `<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dashed === true ? ' stroke-dasharray="6 4"' : ''} points="${path}"/>`,
      );
    }
  }
  const taken: Box[] = series.flatMap((s) =>
    s.points.map((p) => ({ x0: x(p.x) - 5, y0: y(p.y) - 5, x1: x(p.x) + 5, y1: y(p.y) + 5 })),
  );
  const bounds: Box = { x0: plot.left + 2, y0: plot.top + 2, x1: plot.right - 2, y1: plot.bottom - 2 };
  for (const s of series) {
    out.push(`<g class="series" data-name="${escapeXml(s.name)}">`);
    for (const p of s.points) out.push(markerSvg(s.marker, x(p.x), y(p.y), s.color, 4.5, s.hollow === true));
    for (const p of s.points) {
      if (p.label === undefined) continue;
      const placed = placeLabel(x(p.x), y(p.y), textWidth(p.label, 10), bounds, taken);
      if (placed === undefined) continue;
      taken.push(placed.box);
      out.push(
        `<text x="${fmt(placed.x)}" y="${fmt(placed.y)}" font-size="10" fill="${s.color}" text-anchor="${placed.anchor}" stroke="#ffffff" stroke-width="3" paint-order="stroke">${escapeXml(p.label)}</text>`,
      );
    }
    out.push('</g>');
  }

  // Legend, right of the plot.
  const lx = plot.right + 18;
  out.push(`<g class="legend" font-size="12" fill="#111827">`);
  legend.forEach((e, i) => {
    const ly = plot.top + 8 + i * 20;
    const caption = e.marker === undefined && e.line !== true;
    if (e.line === true)
      out.push(
        `<line x1="${lx}" y1="${ly}" x2="${lx + 26}" y2="${ly}" stroke="${e.color}" stroke-width="2"${e.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`,
      );
    if (e.marker !== undefined)
      out.push(
        markerSvg(e.marker, lx + 13, ly, e.color, 4.5, e.hollow === true).replace('class="pt"', 'class="legend-pt"'),
      );
    out.push(
      `<text x="${caption ? lx : lx + 34}" y="${ly + 4}"${caption ? ' fill="#4b5563" font-style="italic"' : ''}>${escapeXml(e.label)}</text>`,
    );
  });
  out.push('</g>');
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** An axis-aligned rectangle in pixels. */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

function overlaps(a: Box, b: Box): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/**
 * Where to print a point label of width `w` next to the point (px, py): the
 * first of right-above, right-below, left-above, left-below, above, below that
 * stays inside `bounds` and clear of the `taken` boxes; undefined if none does.
 */
export function placeLabel(
  px: number,
  py: number,
  w: number,
  bounds: Box,
  taken: readonly Box[],
): { x: number; y: number; anchor: 'start' | 'end' | 'middle'; box: Box } | undefined {
  const h = 10;
  const candidates: [number, number, 'start' | 'end' | 'middle'][] = [
    [7, -6, 'start'],
    [7, 13, 'start'],
    [-7, -6, 'end'],
    [-7, 13, 'end'],
    [0, -9, 'middle'],
    [0, 18, 'middle'],
    [9, 4, 'start'],
    [-9, 4, 'end'],
  ];
  for (const [dx, dy, anchor] of candidates) {
    const tx = px + dx;
    const ty = py + dy;
    const x0 = anchor === 'start' ? tx : anchor === 'end' ? tx - w : tx - w / 2;
    const box = { x0, y0: ty - h + 1, x1: x0 + w, y1: ty + 2 };
    const inside = box.x0 >= bounds.x0 && box.x1 <= bounds.x1 && box.y0 >= bounds.y0 && box.y1 <= bounds.y1;
    if (inside && !taken.some((t) => overlaps(t, box))) return { x: tx, y: ty, anchor, box };
  }
  return undefined;
}

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return h;
}
