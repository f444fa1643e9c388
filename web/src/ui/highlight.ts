// Code highlighting for Markdown: a rehype plugin over lowlight with the languages an SAP
// conversation shows (rehype-highlight bundles ~40 languages: 100 KB gzip; this is a fraction).
import { createLowlight } from 'lowlight'
import bash from 'highlight.js/lib/languages/bash'
import diff from 'highlight.js/lib/languages/diff'
import go from 'highlight.js/lib/languages/go'
import java from 'highlight.js/lib/languages/java'
import javascript from 'highlight.js/lib/languages/javascript'
import json from 'highlight.js/lib/languages/json'
import markdown from 'highlight.js/lib/languages/markdown'
import python from 'highlight.js/lib/languages/python'
import sql from 'highlight.js/lib/languages/sql'
import typescript from 'highlight.js/lib/languages/typescript'
import xml from 'highlight.js/lib/languages/xml'
import yaml from 'highlight.js/lib/languages/yaml'

const lowlight = createLowlight({ bash, diff, go, java, javascript, json, markdown, python, sql, typescript, xml, yaml })
lowlight.registerAlias({ bash: ['sh', 'shell', 'console'], javascript: ['js'], typescript: ['ts'], python: ['py', 'starlark'], xml: ['html'], yaml: ['yml'] })

interface Node {
  type: string
  tagName?: string
  properties?: { className?: string[] | string }
  children?: Node[]
  value?: string
}

function text(n: Node): string {
  return n.type === 'text' ? (n.value ?? '') : (n.children ?? []).map(text).join('')
}

function languageOf(code: Node): string | undefined {
  const cls = code.properties?.className
  const list = Array.isArray(cls) ? cls : typeof cls === 'string' ? cls.split(' ') : []
  for (const c of list) {
    if (c.startsWith('language-')) return c.slice('language-'.length).toLowerCase()
  }
  return undefined
}

function visit(n: Node, parent?: Node) {
  if (n.type === 'element' && n.tagName === 'code' && parent?.tagName === 'pre') {
    const lang = languageOf(n)
    if (lang && lowlight.registered(lang)) {
      const tree = lowlight.highlight(lang, text(n))
      n.children = tree.children as unknown as Node[]
      const cls = n.properties?.className
      n.properties = { ...n.properties, className: [...(Array.isArray(cls) ? cls : []), 'hljs'] }
    }
    return
  }
  for (const c of n.children ?? []) visit(c, n)
}

/** rehype plugin: highlights ```lang fences of the registered languages; others stay plain. */
export function rehypeCodeHighlight() {
  return (tree: Node) => visit(tree)
}
