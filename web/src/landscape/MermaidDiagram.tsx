// One mermaid diagram, drawn as an image. The page's CSP forbids inline <style> elements and
// mermaid puts one inside its SVG, so the SVG is shown through a blob: URL in an <img>: an image
// document is not subject to the page's style rules, and it cannot run scripts. mermaid is
// imported only here, so docs without diagrams never load it.
import { useEffect, useId, useState } from 'react'
import { Spinner } from '../ui/controls'
import { diagramAlt, sizedSvg } from './mermaidBlocks'

let ready: Promise<typeof import('mermaid').default> | null = null

function loadMermaid() {
  ready ??= import('mermaid').then(({ default: mermaid }) => {
    mermaid.initialize({
      startOnLoad: false,
      securityLevel: 'strict',
      htmlLabels: false, // SVG text, no <foreignObject> HTML (which an <img> would not show reliably)
      theme: 'neutral',
      suppressErrorRendering: true, // a bad diagram is reported in words below, not as mermaid's error picture
      fontFamily: 'ui-sans-serif, system-ui, sans-serif',
    })
    return mermaid
  })
  return ready
}

export function MermaidDiagram({ code, title }: { code: string; title: string }) {
  const id = 'mmd-' + useId().replace(/[^a-zA-Z0-9_-]/g, '')
  const [url, setUrl] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    let cancelled = false
    let made: string | null = null
    setUrl(null)
    setError(null)
    loadMermaid()
      .then((mermaid) => mermaid.render(id, code))
      .then(({ svg }) => {
        if (cancelled) return
        made = URL.createObjectURL(new Blob([sizedSvg(svg)], { type: 'image/svg+xml' }))
        setUrl(made)
      })
      .catch((e: unknown) => {
        if (!cancelled) setError(e instanceof Error ? e.message : String(e))
      })
    return () => {
      cancelled = true
      if (made) URL.revokeObjectURL(made)
    }
  }, [code, id])

  return (
    <figure className="my-4 space-y-2">
      {!url && !error && <Spinner label="Drawing the diagram" />}
      {url && <img src={url} alt={diagramAlt(code, title)} className="h-auto max-w-full rounded border border-slate-200 bg-white p-2" />}
      {error && <p role="alert" className="text-sm text-red-800">The diagram could not be drawn: {error}</p>}
      <details className="text-sm">
        <summary className="cursor-pointer text-slate-700">Diagram source</summary>
        <pre tabIndex={0} className="mt-1 overflow-auto rounded bg-slate-100 p-2 text-xs"><code>{code}</code></pre>
      </details>
    </figure>
  )
}
