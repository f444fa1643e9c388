// Diff pages walk a bounded window of keys, so a page may hold fewer objects than asked, even
// none, while has_more stays true. The page keeps fetching until it has `target` objects or
// the list ends; "Load more" raises the target.

export interface DiffPagingState {
  loaded: number // objects loaded so far
  target: number // objects wanted on screen
  hasMore: boolean
  loading: boolean
}

/** Whether to fetch the next page now. */
export function shouldFetchNext(s: DiffPagingState): boolean {
  return s.hasMore && !s.loading && s.loaded < s.target
}

/** What to tell the user while windows are being walked. */
export function diffStatusText(s: DiffPagingState & { lastPageEmpty: boolean }): string | null {
  if (s.loaded === 0 && s.hasMore && s.lastPageEmpty) return 'No differences in this window, loading more…'
  if (s.loaded === 0 && !s.hasMore && !s.loading) return 'No differences of this kind.'
  return null
}
