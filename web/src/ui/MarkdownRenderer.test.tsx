// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, render } from '@testing-library/react'
import MarkdownRenderer from './MarkdownRenderer'

afterEach(cleanup)

function show(text: string) {
  return render(<MarkdownRenderer text={text} />).container
}

// Model output never makes the browser load an image (issue 18, finding 9): the user sees the
// image's description and address, and may open it as a link.
describe('images in model Markdown', () => {
  it('a remote image becomes a link showing its text and address, never an <img>', () => {
    const page = show('Look: ![x](https://evil/img.png)')
    expect(page.querySelector('img')).toBeNull()
    const link = page.querySelector('a')
    expect(link?.getAttribute('href')).toBe('https://evil/img.png')
    expect(link?.textContent).toContain('x')
    expect(link?.textContent).toContain('https://evil/img.png')
    expect(link?.getAttribute('target')).toBe('_blank')
    expect(link?.getAttribute('rel')).toContain('noopener')
  })

  it('a data: image is not shown and not linked', () => {
    const page = show('![pixel](data:image/png;base64,' + 'A'.repeat(500) + ')')
    expect(page.querySelector('img')).toBeNull()
    expect(page.querySelector('a')).toBeNull()
    expect(page.textContent).toContain('pixel (image not shown: data:image/png;base64,')
    expect(page.textContent!.length).toBeLessThan(200)
  })

  it('a relative image is a link to its address, not an <img>', () => {
    const page = show('![logo](/api/files/123/content)')
    expect(page.querySelector('img')).toBeNull()
    expect(page.querySelector('a')?.getAttribute('href')).toBe('/api/files/123/content')
    expect(page.textContent).toContain('logo (image: /api/files/123/content)')
  })

  it('an image inside a link leaves one link and no image', () => {
    const page = show('[![badge](https://evil/b.svg)](https://example.com/page)')
    expect(page.querySelector('img')).toBeNull()
    const links = page.querySelectorAll('a')
    expect(links).toHaveLength(1)
    expect(links[0].getAttribute('href')).toBe('https://example.com/page')
    expect(links[0].textContent).toContain('badge (image not shown: https://evil/b.svg)')
  })

  it('a reference-style image and raw HTML render no <img> either', () => {
    const page = show('![ref][1]\n\n[1]: https://evil/r.png\n\n<img src="https://evil/raw.png">')
    expect(page.querySelector('img')).toBeNull()
    expect(page.querySelector('a')?.getAttribute('href')).toBe('https://evil/r.png')
  })
})
