// Markdown as GitHub renders it (tables, task lists, strikethrough) with highlighted code.
// The renderer is a separate chunk, loaded the first time a page shows Markdown.
import { lazy, memo, Suspense } from 'react'

const Renderer = lazy(() => import('./MarkdownRenderer'))

export const Markdown = memo(function Markdown({ text, className = '' }: { text: string; className?: string }) {
  return (
    <Suspense fallback={<div className={`whitespace-pre-wrap ${className}`}>{text}</div>}>
      <Renderer text={text} className={className} />
    </Suspense>
  )
})
