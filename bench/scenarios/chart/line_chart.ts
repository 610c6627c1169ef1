/**
 * A small dependency-free SVG line-chart writer: stacked panels sharing one
 * x axis (seconds), several named series per panel, optional vertical event
 * markers and a log or linear y axis. Renders to a string (write it to a file).
 */
export interface Series {
  name: string
  color: string
  /** [x, y] points, x in seconds; y ≤ 0 is skipped on a log axis. */
  points: Array<[number, number]>
  dashed?: boolean
}

export interface Panel {
  title: string
  yLabel: string
  series: Series[]
  /** @default false */
  logY?: boolean
}

export interface Chart {
  title: string
  xLabel: string
  panels: Panel[]
  /** Vertical markers at x (s) with a label, e.g. "Redis killed". */
  markers?: Array<{ x: number; label: string }>
}

const W = 900
const PANEL_H = 230
const M = { left: 70, right: 170, top: 34, bottom: 40 }

export function renderChart(chart: Chart): string {
  const xs = chart.panels.flatMap((p) => p.series.flatMap((s) => s.points.map(([x]) => x)))
  const xMax = Math.max(1, ...xs, ...(chart.markers ?? []).map((m) => m.x))
  const height = M.top + chart.panels.length * (PANEL_H + M.bottom) + 10
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${height}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${esc(chart.title)}</text>`,
  ]
  chart.panels.forEach((panel, i) => {
    const top = M.top + i * (PANEL_H + M.bottom) + 16
    out.push(renderPanel(panel, top, xMax, chart))
  })
  out.push('</svg>')
  return out.join('\n')
}

function renderPanel(panel: Panel, top: number, xMax: number, chart: Chart): string {
  const plotW = W - M.left - M.right
  const plotH = PANEL_H - 30
  const ys = panel.series
    .flatMap((s) => s.points.map(([, y]) => y))
    .filter((y) => (panel.logY ? y > 0 : true))
  const yMaxRaw = Math.max(panel.logY ? 1 : 0, ...ys)
  const yMinLog = panel.logY ? 10 ** Math.floor(Math.log10(Math.max(1e-3, Math.min(...ys, 1)))) : 0
  const yMax = panel.logY ? 10 ** Math.ceil(Math.log10(Math.max(yMaxRaw, yMinLog * 10))) : niceMax(yMaxRaw)
  const sx = (x: number) => M.left + (x / xMax) * plotW
  const sy = (y: number) =>
    panel.logY
      ? top +
        plotH -
        ((Math.log10(y) - Math.log10(yMinLog)) / (Math.log10(yMax) - Math.log10(yMinLog))) * plotH
      : top + plotH - (y / yMax) * plotH
  const o: string[] = [
    `<text x="${M.left}" y="${top - 6}" font-size="13" font-weight="bold">${esc(panel.title)}</text>`,
    `<rect x="${M.left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`,
  ]
  const yTicks = panel.logY ? logTicks(yMinLog, yMax) : linTicks(yMax)
  for (const t of yTicks) {
    const y = sy(t)
    o.push(`<line x1="${M.left}" x2="${M.left + plotW}" y1="${y}" y2="${y}" stroke="#eee"/>`)
    o.push(`<text x="${M.left - 5}" y="${y + 4}" text-anchor="end">${fmt(t)}</text>`)
  }
  for (const t of linTicks(xMax)) {
    const x = sx(t)
    o.push(`<line x1="${x}" x2="${x}" y1="${top + plotH}" y2="${top + plotH + 4}" stroke="#999"/>`)
    o.push(`<text x="${x}" y="${top + plotH + 16}" text-anchor="middle">${fmt(t)}</text>`)
  }
  o.push(
    `<text x="${M.left + plotW / 2}" y="${top + plotH + 30}" text-anchor="middle">${esc(chart.xLabel)}</text>`,
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(panel.yLabel)}${panel.logY ? ' (log)' : ''}</text>`,
  )
  for (const m of chart.markers ?? []) {
    const x = sx(m.x)
    o.push(
      `<line x1="${x}" x2="${x}" y1="${top}" y2="${top + plotH}" stroke="#c00" stroke-dasharray="4 3"/>`,
      `<text x="${x + 3}" y="${top + 11}" fill="#c00">${esc(m.label)}</text>`,
    )
  }
  panel.series.forEach((s, i) => {
    const pts = s.points.filter(([, y]) => (panel.logY ? y > 0 : true))
    if (pts.length > 0) {
      const d = pts
        .map(([x, y], k) => `${k === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`)
        .join(' ')
      o.push(
        `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.8"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`,
      )
    }
    const ly = top + 14 + i * 16
    o.push(
      `<line x1="${M.left + plotW + 10}" x2="${M.left + plotW + 30}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`,
      `<text x="${M.left + plotW + 34}" y="${ly}">${esc(s.name)}</text>`,
    )
  })
  return o.join('\n')
}

function niceMax(v: number): number {
  if (v <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(v))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p
  return 10 * p
}

function linTicks(max: number): number[] {
  const step = niceMax(max / 5)
  const ticks: number[] = []
  for (let t = 0; t <= max + 1e-9; t += step) ticks.push(t)
  return ticks
}

function logTicks(min: number, max: number): number[] {
  const ticks: number[] = []
  for (let t = min; t <= max * 1.0001; t *= 10) ticks.push(t)
  return ticks
}

function fmt(n: number): string {
  if (n >= 1000) return `${Number((n / 1000).toPrecision(3))}k`
  return String(Number(n.toPrecision(3)))
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
