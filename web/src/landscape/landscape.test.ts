import { describe, expect, it } from 'vitest'
import { diffStatusText, shouldFetchNext } from './diffPaging'
import { diagramAlt, hasMermaid, sizedSvg, splitMermaid } from './mermaidBlocks'
import { landscapePaths, namePath, query, withCursor } from './paths'

describe('paths', () => {
  it('keeps the slashes of namespaced names and escapes the rest', () => {
    expect(namePath('/ACME/CL_RATING')).toBe('/ACME/CL_RATING')
    expect(landscapePaths.cleanCoreObject('w', 'c', 'CLAS', '/ACME/CL_X')).toBe('/api/workspaces/w/clean-core/objects/CLAS//ACME/CL_X?connection_id=c')
    expect(namePath('A B?#')).toBe('A%20B%3F%23')
  })
  it('builds queries without empty values and swaps the cursor', () => {
    expect(query({ a: 'x', b: '', c: undefined, d: 3 })).toBe('?a=x&d=3')
    expect(query({})).toBe('')
    expect(withCursor('/p?a=1&cursor=old', 'new')).toBe('/p?a=1&cursor=new')
    expect(withCursor('/p', 'n')).toBe('/p?cursor=n')
    expect(withCursor('/p?a=1', null)).toBe('/p?a=1')
  })
})

describe('diff paging', () => {
  it('follows the cursor through empty windows until enough objects are loaded', () => {
    expect(shouldFetchNext({ loaded: 0, target: 50, hasMore: true, loading: false })).toBe(true)
    expect(shouldFetchNext({ loaded: 0, target: 50, hasMore: true, loading: true })).toBe(false)
    expect(shouldFetchNext({ loaded: 50, target: 50, hasMore: true, loading: false })).toBe(false)
    expect(shouldFetchNext({ loaded: 10, target: 50, hasMore: false, loading: false })).toBe(false)
  })
  it('says when a window had no differences', () => {
    expect(diffStatusText({ loaded: 0, target: 50, hasMore: true, loading: true, lastPageEmpty: true })).toMatch(/no differences in this window, loading more/i)
    expect(diffStatusText({ loaded: 0, target: 50, hasMore: false, loading: false, lastPageEmpty: true })).toBe('No differences of this kind.')
    expect(diffStatusText({ loaded: 3, target: 50, hasMore: true, loading: true, lastPageEmpty: true })).toBeNull()
  })
})

describe('splitMermaid', () => {
  const doc = '# ER\n\nText.\n\n```mermaid\nerDiagram\n  VBAK ||--o{ VBAP : has\n```\n\nAfter.\n\n```abap\nWRITE 1.\n```\n'
  it('cuts mermaid fences out and leaves other code in the Markdown', () => {
    const parts = splitMermaid(doc)
    expect(parts.map((p) => p.kind)).toEqual(['markdown', 'mermaid', 'markdown'])
    expect(parts[1]).toEqual({ kind: 'mermaid', code: 'erDiagram\n  VBAK ||--o{ VBAP : has' })
    expect(parts[2].kind === 'markdown' && parts[2].text).toContain('```abap')
    expect(hasMermaid(doc)).toBe(true)
    expect(hasMermaid('```abap\nx\n```')).toBe(false)
  })
  it('takes an unclosed fence to the end and longer fences', () => {
    expect(splitMermaid('````mermaid\ngraph TD\n```\nA-->B\n````')).toEqual([{ kind: 'mermaid', code: 'graph TD\n```\nA-->B' }])
    expect(splitMermaid('~~~mermaid\ngraph TD')).toEqual([{ kind: 'mermaid', code: 'graph TD' }])
  })
  it('describes the diagram for its alt text', () => {
    expect(diagramAlt('erDiagram\n  VBAK ||--o{ VBAP : has\n  VBAP }o--|| MARA : refers', 'Sales')).toBe('Entity-relationship diagram of Sales: VBAK, VBAP, MARA')
    expect(diagramAlt('erDiagram\n  ZORDER {\n    string ID\n  }', 'Orders')).toBe('Entity-relationship diagram of Orders: ZORDER')
    expect(diagramAlt('graph TD\nA-->B', 'Flow')).toBe('Flow chart of Flow')
  })
})

describe('reason shapes', async () => {
  const { reasonUsage, conversionObject } = await import('./reasons')
  it('reads the flat form the API serves and the nested cleancore form', () => {
    expect(reasonUsage({ type: 'FUNC', name: 'BAPI_X', kind: 'call', line: 20, state: 'noAPI', level: 'D', why: '' })).toEqual({ type: 'FUNC', name: 'BAPI_X', kind: 'call', line: 20 })
    expect(reasonUsage({ usage: { type: 'TABL', name: 'KNA1', kind: 'read' }, state: 's', level: 'C', why: '' })).toMatchObject({ type: 'TABL', name: 'KNA1', kind: 'read' })
    expect(conversionObject({ type: 'TABL', name: 'KNA1', state: 'x' })).toEqual({ type: 'TABL', name: 'KNA1' })
    expect(conversionObject({ object: { type: 'FUNC', name: 'F' }, state: 'x' })).toEqual({ type: 'FUNC', name: 'F' })
  })
})

describe('sizedSvg', () => {
  it('gives the SVG its max-width as width', () => {
    const svg = '<svg id="m" width="100%" xmlns="http://www.w3.org/2000/svg" style="max-width: 120.5px;" viewBox="0 0 120.5 80"><style>x</style></svg>'
    expect(sizedSvg(svg)).toBe('<svg id="m" width="120.5" xmlns="http://www.w3.org/2000/svg" style="max-width: 120.5px;" viewBox="0 0 120.5 80"><style>x</style></svg>')
    expect(sizedSvg('<svg width="100%"></svg>')).toBe('<svg width="100%"></svg>')
  })
})
