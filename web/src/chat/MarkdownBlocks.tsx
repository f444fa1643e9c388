// A long reply as Markdown, one block (paragraph, list, table, fenced code) per component: each
// block is memoized by its text, and the whole is rendered in the background (useDeferredValue)
// after a cheap plain-text first paint, so React can yield between blocks instead of blocking
// the main thread with one large render.
import { memo, useDeferredValue, useMemo } from 'react'
import { Markdown } from '../ui/Markdown'

/** Splits Markdown at blank lines outside fenced code blocks. */
export function splitBlocks(text: string): string[] {
  const blocks: string[] = []
  let cur: string[] = []
  let fence: string | null = null
  for (const line of text.split('\n')) {
    const m = /^\s*(`{3,}|~{3,})/.exec(line)
    if (m) {
      if (fence === null) fence = m[1][0]
      else if (m[1][0] === fence) fence = null
    }
    if (fence === null && line.trim() === '' && cur.length) {
      blocks.push(cur.join('\n'))
      cur = []
      continue
    }
    if (fence === null && line.trim() === '') continue
    cur.push(line)
  }
  if (cur.length) blocks.push(cur.join('\n'))
  return blocks
}

const Block = memo(function Block({ text }: { text: string }) {
  return <Markdown text={text} />
})

export const MarkdownBlocks = memo(function MarkdownBlocks({ text }: { text: string }) {
  const deferred = useDeferredValue(text, '')
  const blocks = useMemo(() => splitBlocks(deferred), [deferred])
  if (deferred !== text) return <div className="whitespace-pre-wrap break-words">{text}</div>
  return (
    <div className="space-y-3">
      {blocks.map((b, i) => <Block key={i} text={b} />)}
    </div>
  )
})
