// Splits a doc's Markdown into prose and ```mermaid fences, so the diagrams can be drawn by
// mermaid (loaded only when a doc has one) and the rest by the Markdown renderer.

export type DocPart = { kind: 'markdown'; text: string } | { kind: 'mermaid'; code: string }

const fence = /^( {0,3})(`{3,}|~{3,})[ \t]*mermaid[ \t]*$/

export function splitMermaid(md: string): DocPart[] {
  const lines = md.split('\n')
  const parts: DocPart[] = []
  let prose: string[] = []
  const flush = () => {
    if (prose.join('').trim()) parts.push({ kind: 'markdown', text: prose.join('\n') })
    prose = []
  }
  for (let i = 0; i < lines.length; i++) {
    const m = fence.exec(lines[i])
    if (!m) {
      prose.push(lines[i])
      continue
    }
    // The fence closes with the same character, at least as long as it opened (CommonMark).
    const open = m[2]
    const close = new RegExp(`^ {0,3}${open[0] === '`' ? '`' : '~'}{${open.length},}[ \\t]*$`)
    let j = i + 1
    while (j < lines.length && !close.test(lines[j])) j++
    flush()
    parts.push({ kind: 'mermaid', code: lines.slice(i + 1, j).join('\n') })
    i = j
  }
  flush()
  return parts
}

export function hasMermaid(md: string): boolean {
  return md.split('\n').some((l) => fence.test(l))
}

/** What a diagram shows, in words, for its alt text: its kind and the entities it names. */
export function diagramAlt(code: string, title: string): string {
  const first = code.trim().split('\n')[0]?.trim() ?? ''
  const kind = /^erDiagram/.test(first) ? 'Entity-relationship diagram' : /^(flowchart|graph)\b/.test(first) ? 'Flow chart' : /^sequenceDiagram/.test(first) ? 'Sequence diagram' : 'Diagram'
  const names = new Set<string>()
  if (kind === 'Entity-relationship diagram') {
    // Relationship lines (A ||--o{ B : label) name two entities; entity blocks (A {) one.
    for (const m of code.matchAll(/^\s*"?([A-Za-z0-9_/]+)"?\s+\S+\s+"?([A-Za-z0-9_/]+)"?\s*:/gm)) names.add(m[1]).add(m[2])
    for (const m of code.matchAll(/^\s*"?([A-Za-z0-9_/]+)"?\s*\{\s*$/gm)) names.add(m[1])
  }
  const list = [...names].slice(0, 12)
  return `${kind} of ${title}${list.length ? `: ${list.join(', ')}${names.size > list.length ? ', …' : ''}` : ''}`
}

/**
 * Gives mermaid's SVG its natural size: mermaid writes width="100%" and a max-width style,
 * which in an <img> would stretch a one-box diagram over the whole column.
 */
export function sizedSvg(svg: string): string {
  const m = /<svg\b[^>]*?style="[^"]*max-width:\s*([\d.]+)px/.exec(svg)
  if (!m) return svg
  return svg.replace(/(<svg\b[^>]*?)\swidth="100%"/, `$1 width="${m[1]}"`)
}
