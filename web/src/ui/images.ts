// Model output never loads an image: a Markdown image in a reply (or a generated document) would
// make the browser fetch an address the model chose — a tracking pixel, or a way to carry data
// out in the URL — stopped today only by the Content-Security-Policy. This rehype plugin turns
// every image into its description and address, as a link the user may choose to open
// (docs/web.md, "Markdown").

interface Node {
  type: string
  tagName?: string
  properties?: Record<string, unknown>
  children?: Node[]
  value?: string
}

/** The longest address shown in full; longer ones are cut (a data: URL can be megabytes). */
const maxShown = 100

function shown(src: string): string {
  return src.length > maxShown ? src.slice(0, maxShown) + '…' : src
}

/** Links only where a link in Markdown may point: http(s), mailto and relative addresses. */
function linkable(src: string): boolean {
  const colon = src.indexOf(':')
  if (colon === -1) return true
  const slash = src.search(/[/?#]/)
  if (slash !== -1 && slash < colon) return true // relative: the colon is in the path
  return /^(https?|mailto)$/i.test(src.slice(0, colon))
}

function replacement(img: Node, insideLink: boolean): Node {
  const src = typeof img.properties?.src === 'string' ? img.properties.src.trim() : ''
  const alt = typeof img.properties?.alt === 'string' && img.properties.alt.trim() ? img.properties.alt.trim() : 'image'
  const text = (value: string): Node => ({ type: 'text', value })
  if (insideLink || !src || !linkable(src)) {
    // Inside a link (no nested anchors) or an address no link may have: the words only.
    const label = src ? `${alt} (image not shown: ${shown(src)})` : `${alt} (image not shown)`
    return { type: 'element', tagName: 'span', properties: { className: ['markdown-image'] }, children: [text(label)] }
  }
  return {
    type: 'element',
    tagName: 'a',
    properties: { href: src, className: ['markdown-image'], title: 'image not shown: opens in a new tab' },
    children: [text(`${alt} (image: ${shown(src)})`)],
  }
}

function visit(n: Node, insideLink: boolean) {
  const kids = n.children
  if (!kids) return
  const inLink = insideLink || (n.type === 'element' && n.tagName === 'a')
  for (let i = 0; i < kids.length; i++) {
    const c = kids[i]
    if (c.type === 'element' && c.tagName === 'img') kids[i] = replacement(c, inLink)
    else visit(c, inLink)
  }
}

/** rehype plugin: no <img> in the output; each image becomes its description and address. */
export function rehypeImagesAsLinks() {
  return (tree: Node) => visit(tree, false)
}
