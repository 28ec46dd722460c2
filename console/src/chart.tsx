// A uPlot line chart of the overview's history, as wide as its box (it follows the box's width, so
// it fits a narrow window). uPlot draws on a canvas and keeps the data it is given, nothing more.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartSeries {
  readonly label: string;
  readonly color: string;
  readonly values: readonly number[];
  /** How a value reads in the legend and on its axis. */
  readonly format: (v: number) => string;
  /** A second scale, drawn on the right (e.g. CPU % beside memory). */
  readonly right?: boolean;
}

export function Chart(props: { times: readonly number[]; series: readonly ChartSeries[]; height?: number; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const height = props.height ?? 180;
  const data = [props.times.map((t) => t / 1000), ...props.series.map((s) => [...s.values])] as uPlot.AlignedData;
  const shape = props.series.map((s) => s.label).join('\u0000');

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const text = getComputedStyle(el).color;
    const grid = 'rgba(128,128,128,0.2)';
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const p = new uPlot(
      {
        width: Math.max(200, el.clientWidth),
        height,
        cursor: { drag: { x: false, y: false } },
        legend: { live: false },
        scales: {
          x: { time: true },
          left: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
          right: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          axis,
          { ...axis, scale: 'left', size: 56, space: 20 },
          ...(props.series.some((s) => s.right) ? [{ ...axis, scale: 'right', side: 1 as const, size: 56, space: 20, grid: { show: false } }] : []),
        ],
        series: [
          {},
          ...props.series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 1.5,
            scale: s.right ? 'right' : 'left',
            points: { show: false },
            value: (_u: uPlot, v: number | null) => (v === null ? '–' : s.format(v)),
          })),
        ],
      },
      data,
      el,
    );
    plot.current = p;
    const ro = new ResizeObserver(() => p.setSize({ width: Math.max(200, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      p.destroy();
      plot.current = null;
    };
    // Built again only when the series change; new data goes through setData below.
  }, [shape, height]);

  useEffect(() => {
    plot.current?.setData(data);
  });

  return <div class="chart" ref={box} role="img" aria-label={props.label} />;
}

/** A small SVG line of the last values (a rule's matched per second), scaled to its own maximum. */
export function Sparkline(props: { values: readonly number[]; width?: number; height?: number; title?: string }) {
  const w = props.width ?? 120;
  const h = props.height ?? 28;
  const v = props.values;
  const max = Math.max(1e-9, ...v);
  const step = v.length > 1 ? w / (v.length - 1) : 0;
  const points = v.map((x, i) => `${(i * step).toFixed(1)},${(h - 1 - (x / max) * (h - 2)).toFixed(1)}`).join(' ');
  return (
    <svg class="spark" width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={props.title ?? 'trend'}>
      {v.length > 1 ? <polyline points={points} fill="none" stroke="currentColor" stroke-width="1.5" /> : null}
    </svg>
  );
}
