// The landscape screens after a sync a person starts and watches: the live progress bar moves
// while the sync runs and the run shows as finished without a reload; then the Clean Core chart,
// its table and an object's reasons, the inventory search and an ER diagram of the generated docs.
// The harness gives the simulator a larger landscape (SAPSIM_LANDSCAPE_OBJECTS, e2e/run.mjs), so
// the sync takes a few seconds and its progress visibly advances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import {
  apiUser, axeCheck, closeTab, describeViolations, launchBrowser, mermaidInlineStyle, openTab, recordResult, screenshot,
  signInWithToken, waitForAttribute, type AxeReport,
} from './lib'

let browser: Browser
beforeAll(async () => { browser = await launchBrowser() })
afterAll(async () => { await browser?.close() })

async function expectAccessible(page: Page, what: string): Promise<AxeReport> {
  const r = await axeCheck(page)
  expect(r.serious, `${what}: ${describeViolations(r.serious)}`).toEqual([])
  expect(r.passes, `${what}: axe did not run`).toBeGreaterThan(10)
  expect(r.score, `${what}: ${describeViolations(r.violations)}`).toBeGreaterThanOrEqual(95)
  return r
}

const summary = (r: AxeReport) => ({ score: r.score, rules_passed: r.passes, violations: r.violations.map((v) => `${v.id} (${v.impact})`) })

interface BarState { now: string | null; text: string | null; gone?: boolean; t: number }

/**
 * Records every state of the progress bar named label from now on (a MutationObserver in the
 * page: no state is missed, however short), and marks the document so a reload would show.
 */
async function recordProgressBar(page: Page, label: string) {
  await page.evaluate((label) => {
    const w = window as unknown as { __bar: BarState[]; __e2eSameDocument: boolean }
    w.__bar = []
    w.__e2eSameDocument = true
    const snap = () => {
      const el = [...document.querySelectorAll('[role="progressbar"]')].find((e) => e.getAttribute('aria-label') === label)
      const last = w.__bar[w.__bar.length - 1]
      if (!el) {
        if (last && !last.gone) w.__bar.push({ now: null, text: null, gone: true, t: performance.now() })
        return
      }
      const s = { now: el.getAttribute('aria-valuenow'), text: el.getAttribute('aria-valuetext'), t: performance.now() }
      if (!last || last.gone || last.now !== s.now || last.text !== s.text) w.__bar.push(s)
    }
    new MutationObserver(snap).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-valuenow', 'aria-valuetext'] })
  }, label)
}

const barStates = (page: Page) => page.evaluate(() => (window as unknown as { __bar: BarState[] }).__bar)
const sameDocument = (page: Page) => page.evaluate(() => (window as unknown as { __e2eSameDocument?: boolean }).__e2eSameDocument === true)

const num = (s: string) => Number(s.replace(/,/g, ''))

interface CleanCoreSummary { summary: { objects: number; levels: { level: string; objects: number }[] } }

describe('landscape', () => {
  it('a sync with live progress and its Clean Core page, inventory and docs', async () => {
    // Fixed names (each run has a fresh database) keep the screenshots the same from run to run.
    const u = await apiUser('lin')
    const org = await u.createOrg('Lin Distribution')
    const ws = await u.createWorkspace(org.id, 'Plant 3000')
    const conn = await u.createSimulatedConnection(ws.id, 'ERP ECC', 'ECC')
    const tab = await openTab(browser, { viewport: { width: 1280, height: 900 } })
    const { page } = tab
    const sections = page.getByRole('navigation', { name: 'Landscape sections' })
    const axe: Record<string, ReturnType<typeof summary>> = {}
    try {
      // Overview before the first sync: it says so and leads to the sync tab.
      await signInWithToken(page, u.user, `/w/${ws.id}/landscape`)
      await page.waitForURL(/\/landscape\/overview$/)
      const card = page.getByRole('region', { name: 'ERP ECC (ECC)' })
      await card.getByText('No index yet: start a sync.').waitFor()
      await card.getByRole('link', { name: 'Start a sync' }).click()
      await page.waitForURL(/\/landscape\/sync$/)
      await page.getByText('Live updates on').waitFor() // the workspace topic is open

      // Start a full sync and watch it.
      const label = `Sync progress of ${conn.name}`
      await recordProgressBar(page, label)
      const started = Date.now()
      await page.getByRole('button', { name: `Start full sync of ${conn.name}` }).click()
      const bar = page.getByRole('progressbar', { name: label })
      await bar.waitFor({ timeout: 5_000 })
      const appearedMs = Date.now() - started
      // A moment into the run the bar has a percentage: the screenshot shows it moving.
      await page.locator(`[role="progressbar"][aria-valuenow]:not([aria-valuenow="100"])`).waitFor({ timeout: 3_000 }).catch(() => {})
      await screenshot(page, 'landscape-sync')
      axe.landscape_sync = summary(await expectAccessible(page, 'sync tab'))
      await bar.waitFor({ state: 'detached', timeout: 90_000 })
      const syncMs = Date.now() - started

      // The run is listed as finished, without a reload.
      const runs = page.getByRole('table', { name: 'Sync runs, newest first' })
      const run = runs.getByRole('row').filter({ hasText: 'ERP ECC' }).filter({ hasText: 'manual' })
      await run.filter({ hasText: 'succeeded' }).waitFor({ timeout: 10_000 })
      await expect(run.count()).resolves.toBe(1)
      await expect(run.innerText()).resolves.toMatch(/\bfull\b/)
      const syncCard = page.getByRole('region', { name: 'ERP ECC (ECC)' })
      await syncCard.getByText('generation 1').waitFor()
      await expect(syncCard.innerText()).resolves.toMatch(/Index\s+ready/)
      expect(await sameDocument(page), 'the page was reloaded').toBe(true)

      // What the bar said while the sync ran: it moved, and its numbers agree with its words.
      const states = await barStates(page)
      const shown = states.filter((s) => !s.gone)
      expect(states.at(-1)?.gone, 'the bar did not go away at the end').toBe(true)
      const texts = [...new Set(shown.map((s) => s.text))]
      expect(texts.length, `the progress text never changed: ${texts.join(' | ')}`).toBeGreaterThanOrEqual(3)
      const values = [...new Set(shown.filter((s) => s.now !== null).map((s) => Number(s.now)))]
      expect(values.length, `aria-valuenow never changed: ${values.join(', ')}`).toBeGreaterThanOrEqual(2)
      for (const s of shown) {
        const m = /^([a-z ]+): ([\d,]+)(?: of ([\d,]+))? items(?: \((\d+)%\))?$/.exec(s.text ?? '')
        expect(m, `unexpected aria-valuetext "${s.text}"`).not.toBeNull()
        const [, , done, total, pct] = m!
        if (s.now === null) {
          expect(pct, `"${s.text}" has a percentage but no aria-valuenow`).toBeUndefined()
          continue
        }
        const now = Number(s.now)
        expect(now).toBeGreaterThanOrEqual(0)
        expect(now).toBeLessThanOrEqual(100)
        expect(Number(pct), `aria-valuenow ${now} and "${s.text}" disagree`).toBe(now)
        expect(now).toBe(Math.min(100, Math.round((100 * num(done)) / num(total!))))
      }
      // Within one phase the count went up while the run was going (the bar advanced).
      const advanced = shown.some((s, i) => {
        const prev = shown[i - 1]
        const phase = (x?: BarState) => x?.text?.split(':')[0]
        return prev && phase(prev) === phase(s) && Number(s.now ?? -1) > Number(prev.now ?? -1) && Number(prev.now ?? -1) >= 0
      })
      recordResult('landscape', {
        sync: { bar_appeared_ms: appearedMs, sync_ms: syncMs, bar_states: shown.length, distinct_texts: texts.length, advanced_within_a_phase: advanced, texts },
      })

      // Clean Core: the chart (an image with its figures in its name) and the same figures in a table.
      await sections.getByRole('link', { name: 'Clean Core' }).click()
      const api = await u.call<CleanCoreSummary>('GET', `/api/workspaces/${ws.id}/clean-core?connection_id=${conn.id}&limit=1`)
      const total = api.summary.objects.toLocaleString('en-US')
      expect(api.summary.objects).toBeGreaterThan(0)
      const chart = page.getByRole('img', { name: new RegExp(`^Clean Core distribution \\(${total} objects\\) chart\\. A: `) })
      await chart.waitFor()
      const chartName = (await chart.getAttribute('aria-label'))!
      const table = page.getByRole('table', { name: `Clean Core distribution (${total} objects) (table)` })
      for (const l of api.summary.levels) {
        expect(chartName).toMatch(new RegExp(`\\b${l.level}: ${l.objects.toLocaleString('en-US')} \\(`))
        const row = table.getByRole('row', { name: new RegExp(`^${l.level} \\(show objects of level ${l.level}\\)`) })
        await expect(row.getByRole('cell').nth(1).innerText()).resolves.toBe(l.objects.toLocaleString('en-US'))
      }
      await screenshot(page, 'clean-core')
      axe.clean_core = summary(await expectAccessible(page, 'clean core tab'))

      // A level's button filters the objects to that level.
      const level = [...api.summary.levels].reverse().find((l) => l.objects > 0)!.level // the worst level with objects
      const levelButton = page.getByRole('button', { name: `${level} (show objects of level ${level})` })
      await levelButton.click()
      await waitForAttribute(levelButton, 'aria-pressed', 'true')
      await page.waitForURL(new RegExp(`[?&]level=${level}\\b`))
      const objects = page.getByRole('table', { name: 'Custom objects and their Clean Core level' })
      const levelCells = objects.locator('tbody tr td:nth-of-type(2)') // Object is a row header: Package, then Level
      await page.waitForFunction((lvl) => {
        const t = [...document.querySelectorAll('table')].find((x) => x.caption?.textContent === 'Custom objects and their Clean Core level')
        const cells = t ? [...t.querySelectorAll('tbody tr td:nth-of-type(2)')].map((c) => c.textContent) : []
        return cells.length > 0 && cells.every((c) => c === lvl)
      }, level)
      expect(await levelCells.count()).toBeGreaterThan(0)

      // An object's detail: its level and every reason.
      const link = objects.getByRole('link').first()
      const [objType, objName] = (await link.innerText()).trim().split(/\s+/)
      await link.click()
      await page.getByRole('heading', { level: 2, name: `${objType} ${objName}` }).waitFor()
      const reasons = page.getByRole('table', { name: `Every reason for level ${level}` })
      await reasons.waitFor()
      const reasonRows = reasons.locator('tbody tr')
      const detail = await u.call<{ level: string; reasons: unknown[] }>('GET',
        `/api/workspaces/${ws.id}/clean-core/objects/${encodeURIComponent(objType)}/${objName.split('/').map(encodeURIComponent).join('/')}?connection_id=${conn.id}`)
      expect(detail.level).toBe(level)
      expect(detail.reasons.length).toBeGreaterThan(0)
      await expect(reasonRows.count()).resolves.toBe(detail.reasons.length)
      await expect(reasonRows.first().locator('td').first().innerText()).resolves.toMatch(/^[A-D]$/)
      await expect(reasonRows.first().locator('td').nth(5).innerText()).resolves.not.toBe('') // why
      axe.clean_core_object = summary(await expectAccessible(page, 'clean core object'))
      await page.getByRole('link', { name: '← Back to Clean Core' }).click()
      await waitForAttribute(page.getByRole('button', { name: `${level} (show objects of level ${level})` }), 'aria-pressed', 'true')

      // Inventory: a search by part of the object's name finds it.
      await sections.getByRole('link', { name: 'Inventory' }).click()
      // Part of the name, in lower case (the search ignores case): specific enough for one page.
      const part = (objName.length > 6 ? objName.slice(1) : objName).toLowerCase()
      const form = page.getByRole('search', { name: 'Search objects' })
      await form.getByLabel('Object name contains').fill(part)
      await form.getByRole('button', { name: 'Search' }).click()
      await page.waitForURL(new RegExp(`[?&]q=${encodeURIComponent(part)}`))
      // The table follows the search: every name contains the part, the object among them.
      await page.waitForFunction(([part, name]) => {
        const t = [...document.querySelectorAll('table')].find((x) => /^Objects \(\d+\+? shown\)$/.test(x.caption?.textContent ?? ''))
        const names = t ? [...t.querySelectorAll('tbody th[scope="row"]')].map((c) => c.textContent ?? '') : []
        return names.includes(name) && names.every((n) => n.toLowerCase().includes(part))
      }, [part, objName] as const)
      const found = page.getByRole('table', { name: /^Objects \(\d+\+? shown\)$/ })
      await found.getByRole('rowheader', { name: objName, exact: true }).waitFor()
      axe.inventory = summary(await expectAccessible(page, 'inventory tab'))

      // Docs: an ER diagram drawn as an image. mermaid's measuring <style> is blocked by the CSP
      // and logged: expected on this page only (lib.ts mermaidInlineStyle).
      tab.allowCSP.push(mermaidInlineStyle)
      await sections.getByRole('link', { name: 'Docs' }).click()
      await page.getByLabel('Kind').selectOption('er_diagram')
      await page.waitForURL(/[?&]kind=er_diagram\b/)
      const docs = page.getByRole('navigation', { name: 'Generated docs' })
      // The list follows the filter: ER diagrams only.
      await page.waitForFunction(() => {
        const links = [...document.querySelectorAll('nav[aria-label="Generated docs"] a')]
        return links.length > 0 && links.every((a) => a.textContent?.startsWith('ER diagram: package '))
      })
      // ZSD_PRICING (the simulator's built-in landscape): a table used with three others.
      const doc = docs.getByRole('link', { name: /^ER diagram: package ZSD_PRICING\b/ })
      await doc.click()
      await waitForAttribute(doc, 'aria-current', 'page')
      await page.getByRole('heading', { level: 3, name: 'ER diagram: package ZSD_PRICING' }).waitFor()
      const diagram = page.getByRole('img', { name: /^Entity-relationship diagram of / })
      await diagram.waitFor({ timeout: 30_000 }) // mermaid is loaded on first use
      const alt = await diagram.getAttribute('alt')
      for (const table of ['ZSALES_BONUS', 'KNA1', 'KONV', 'VBAK']) expect(alt).toContain(table)
      const drawn = await diagram.evaluate(async (img: HTMLImageElement) => {
        await img.decode().catch(() => {})
        return { complete: img.complete, width: img.naturalWidth, height: img.naturalHeight, src: img.src.slice(0, 5) }
      })
      expect(drawn).toMatchObject({ complete: true, src: 'blob:' })
      expect(drawn.width).toBeGreaterThan(50)
      expect(drawn.height).toBeGreaterThan(50)
      await expect(page.getByRole('alert').filter({ hasText: 'The diagram could not be drawn' }).count()).resolves.toBe(0)
      await screenshot(page, 'docs-er')
      axe.docs = summary(await expectAccessible(page, 'docs tab'))

      // The overview after the sync: figures and the compact chart.
      await sections.getByRole('link', { name: 'Overview' }).click()
      await page.getByRole('img', { name: /^Clean Core levels of ERP ECC chart\. A: / }).waitFor()
      await page.getByRole('table', { name: 'Objects by type' }).waitFor()
      axe.landscape_overview = summary(await expectAccessible(page, 'overview tab'))
      expect(await sameDocument(page)).toBe(true)
      recordResult('landscape', { allowed_csp_messages: tab.allowedCSP.length })
      recordResult('accessibility', axe)
    } finally {
      await closeTab(tab)
    }
  })
})
