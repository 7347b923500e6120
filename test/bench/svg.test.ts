import { describe, expect, it } from 'vitest';
import {
  drawable,
  escapeXml,
  formatTick,
  linearTicks,
  logTicks,
  paddedDomain,
  placeLabel,
  renderChart,
  scale,
  type ChartSpec,
} from '../../bench/report/svg.js';
import { checkXml, countPoints } from './xml.js';

describe('ticks', () => {
  it('linear ticks fall on 1/2/5 steps inside the range', () => {
    expect(linearTicks(0.9, 1, 5).map((t) => t.value)).toEqual([0.9, 0.92, 0.94, 0.96, 0.98, 1]);
    expect(linearTicks(0, 5600, 6).map((t) => t.label)).toEqual(['0', '1k', '2k', '3k', '4k', '5k']);
    const ticks = linearTicks(-3.2, 7.9);
    expect(ticks.every((t) => t.value >= -3.2 && t.value <= 7.9)).toBe(true);
    expect(ticks.length).toBeGreaterThanOrEqual(4);
  });

  it('log ticks thin out as the range widens', () => {
    expect(logTicks(0.3, 120).map((t) => t.label)).toEqual(['0.5', '1', '2', '5', '10', '20', '50', '100']);
    expect(logTicks(1000, 1e10).map((t) => t.label)).toEqual(['1k', '10k', '100k', '1M', '10M', '100M', '1G', '10G']);
    expect(logTicks(1, 1e5).map((t) => t.label)).toEqual([
      '1',
      '3',
      '10',
      '30',
      '100',
      '300',
      '1k',
      '3k',
      '10k',
      '30k',
      '100k',
    ]);
    expect(logTicks(12, 80).length).toBeGreaterThanOrEqual(3);
    expect(logTicks(0, 10)).toEqual([]);
  });

  it('formats tick labels with k and M', () => {
    expect(formatTick(0.05)).toBe('0.05');
    expect(formatTick(20_000)).toBe('20k');
    expect(formatTick(2_500_000)).toBe('2.5M');
    expect(formatTick(0.1 + 0.2)).toBe('0.3');
  });
});

describe('scale', () => {
  it('maps linearly and logarithmically onto pixels', () => {
    const lin = scale([0, 10], [100, 200]);
    expect(lin(5)).toBe(150);
    const log = scale([1, 100], [0, 200], true);
    expect(log(10)).toBeCloseTo(100);
    expect(log(1)).toBe(0);
    const flipped = scale([0, 1], [400, 0]);
    expect(flipped(1)).toBe(0);
  });

  it('pads the data range, in decades on a log axis', () => {
    const [lo, hi] = paddedDomain([1, 100], true);
    expect(lo).toBeLessThan(1);
    expect(hi).toBeGreaterThan(100);
    expect(Math.log10(1 / lo)).toBeCloseTo(Math.log10(hi / 100));
    expect(paddedDomain([5, 5], false)[0]).toBeLessThan(5);
    expect(paddedDomain([-1, 0, Number.NaN], true)).toEqual([1, 10]);
  });

  it('leaves out points a log axis cannot show', () => {
    expect(drawable({ x: 0, y: 1 }, true, false)).toBe(false);
    expect(drawable({ x: 0, y: 1 }, false, false)).toBe(true);
    expect(drawable({ x: 1, y: Number.NaN }, false, false)).toBe(false);
  });
});

describe('placeLabel', () => {
  const bounds = { x0: 0, y0: 0, x1: 200, y1: 100 };
  it('puts a label right of its point, or elsewhere when that spot is taken or outside', () => {
    expect(placeLabel(50, 50, 20, bounds, [])?.anchor).toBe('start');
    const taken = [{ x0: 50, y0: 30, x1: 90, y1: 49 }];
    const moved = placeLabel(50, 50, 20, bounds, taken);
    expect(moved).toBeDefined();
    expect(moved!.box.y0).toBeGreaterThanOrEqual(49);
    expect(placeLabel(195, 50, 20, bounds, [])?.anchor).toBe('end');
    expect(placeLabel(50, 50, 500, bounds, [])).toBeUndefined();
  });
});

describe('renderChart', () => {
  const spec: ChartSpec = {
    title: 'recall <vs> time & more',
    subtitle: 'k = 10',
    xLabel: 'p50 ms',
    yLabel: 'recall@10',
    xLog: true,
    series: [
      {
        name: 'a',
        color: '#0072B2',
        marker: 'circle',
        points: [
          { x: 0.5, y: 0.95, label: '16' },
          { x: 1, y: 0.99, label: '32' },
          { x: 2, y: 1 },
        ],
      },
      {
        name: 'b',
        color: '#D55E00',
        marker: 'triangle',
        line: false,
        points: [
          { x: 0.3, y: 0.95 },
          { x: 0, y: 0.99 },
        ],
      },
      { name: 'c', color: '#009E73', marker: 'square', line: false, hollow: true, points: [{ x: 100, y: 1 }] },
      {
        name: 'd',
        color: '#CC79A7',
        marker: 'diamond',
        dashed: true,
        points: [
          { x: 3, y: 0.97 },
          { x: 4, y: 0.98 },
        ],
      },
    ],
  };

  it('is well-formed SVG with one marker per drawable point', () => {
    const svg = renderChart(spec);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(checkXml(svg)).toEqual([]);
    // 3 + 1 (x = 0 cannot sit on a log axis) + 1 + 2
    expect(countPoints(svg)).toBe(7);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain('stroke-dasharray');
    expect(svg).toContain('recall &lt;vs&gt; time &amp; more');
    expect(svg).toContain('p50 ms (log scale)');
    expect(svg).toMatch(/<rect class="pt" fill="#ffffff" fill-opacity="0.6" stroke="#009E73"/);
  });

  it('draws the legend, axis ticks and point labels', () => {
    const svg = renderChart(spec);
    for (const name of ['a', 'b', 'c', 'd']) expect(svg).toContain(`>${name}</text>`);
    expect(svg.match(/class="legend-pt"/g)).toHaveLength(4);
    expect(svg).toContain('>16</text>');
    const xTicks = /<g class="x-ticks"[^>]*>([\s\S]*?)<\/g>/.exec(svg)?.[1] ?? '';
    expect(xTicks.match(/<text/g)?.length ?? 0).toBeGreaterThanOrEqual(4);
  });

  it('takes a custom legend and fixed domains', () => {
    const svg = renderChart({ ...spec, yDomain: [0.9, 1.005], legend: [{ label: 'caption only', color: '#000' }] });
    expect(checkXml(svg)).toEqual([]);
    expect(svg).toContain('font-style="italic">caption only</text>');
    expect(svg).toContain('>0.9</text>');
  });

  it('renders an empty chart without failing', () => {
    const svg = renderChart({ title: 'empty', xLabel: 'x', yLabel: 'y', series: [] });
    expect(checkXml(svg)).toEqual([]);
    expect(countPoints(svg)).toBe(0);
  });

  it('escapes text', () => {
    expect(escapeXml('a<b & "c"')).toBe('a&lt;b &amp; &quot;c&quot;');
  });
});
