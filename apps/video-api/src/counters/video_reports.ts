import type { CountTriple, RebuildReport, ReconcileReport } from 'floodgate'

/** A rebuild report in the service's words (`playVideos`), as the admin route and the CLI print it. */
export interface VideoRebuildReport extends Omit<RebuildReport, 'playItems'> {
  /** Videos whose play counter was restored. */
  playVideos: number
}

/** A reconcile report in the service's words (`videoId`). */
export interface VideoReconcileReport {
  checked: number
  drifted: { videoId: string; redis: CountTriple; db: CountTriple }[]
  columnDrift: { videoId: string; columns: CountTriple; db: CountTriple }[]
}

/** floodgate counts items; the service's items are videos. */
export function videoRebuildReport(report: RebuildReport): VideoRebuildReport {
  const { playItems, ...rest } = report
  return { ...rest, playVideos: playItems }
}

/** floodgate counts items; the service's items are videos. */
export function videoReconcileReport(report: ReconcileReport): VideoReconcileReport {
  return {
    checked: report.checked,
    drifted: report.drifted.map(({ itemId, ...drift }) => ({ videoId: itemId, ...drift })),
    columnDrift: report.columnDrift.map(({ itemId, ...drift }) => ({ videoId: itemId, ...drift })),
  }
}
