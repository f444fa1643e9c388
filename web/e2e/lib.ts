// Shared helpers of the browser tests: Chromium, pages that fail a test on a CSP violation or an
// uncaught error, sign-in through the real form, API calls to set up data quickly, screenshots,
// the axe accessibility check and the performance measurements the quality bars ask for.
// The tests run against the private dev stack e2e/run.mjs starts; it passes its URL in E2E_BASE_URL.
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, '../..')
export const resultsDir = process.env.E2E_RESULTS ?? path.join(here, 'results')
export const screenshotsDir = path.join(repoRoot, 'docs', 'screenshots')

/** The dev stack's URL, without a trailing slash. */
export const baseURL = (() => {
  const u = process.env.E2E_BASE_URL
  if (!u) throw new Error('E2E_BASE_URL is not set: run the browser tests with `npm run e2e` (e2e/run.mjs starts a dev stack)')
  return u.replace(/\/$/, '')
})()

// ---------------------------------------------------------------------------------------------
// Browser and pages

/** Flags for Debian's Chromium on a machine without a network or a GPU (see scripts/chromium.sh). */
export const chromiumArgs = [
  '--no-sandbox', // CI runs as root
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking', // no calls to Google's hosts: this machine's network is closed
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
]

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: chromiumArgs })
}

/** One browser tab in its own context (its own storage: a fresh user), watched for problems. */
export interface Tab {
  context: BrowserContext
  page: Page
  /** CSP violations, uncaught page errors and unexpected console errors seen so far. */
  problems: string[]
  /** Console errors matching one of these are expected (a test that cuts the connection, say). */
  allow: RegExp[]
  /** CSP violations a test expects on some pages (never a blanket pass: a message and a path). */
  allowCSP: CSPAllowance[]
  /** The CSP violations allowCSP let through, for a test that wants to count them. */
  allowedCSP: string[]
}

/** One expected CSP violation: its console message, on pages whose path matches. */
export interface CSPAllowance { message: RegExp; path: RegExp }

/**
 * mermaid inserts a <style> element while it measures a diagram; the page's CSP (style-src
 * 'self') blocks it and Chromium logs the violation. The drawn SVG is shown through an <img>, so
 * nothing is lost (landscape/MermaidDiagram.tsx). Allowed only on the generated docs' pages.
 */
export const mermaidInlineStyle: CSPAllowance = {
  message: /^Applying inline style violates the following Content Security Policy directive 'style-src 'self''/,
  path: /^\/w\/[^/]+\/landscape\/docs(\/|$)/,
}

export interface TabOptions {
  viewport?: { width: number; height: number }
  /** Only for checks that must inject code the page's CSP forbids; never for the flow under test. */
  bypassCSP?: boolean
  /** Reuse a context (a second tab of the same user). */
  context?: BrowserContext
}

export async function openTab(browser: Browser, opts: TabOptions = {}): Promise<Tab> {
  const context = opts.context ?? await browser.newContext({
    baseURL,
    viewport: opts.viewport ?? { width: 1280, height: 800 },
    bypassCSP: opts.bypassCSP ?? false,
    reducedMotion: 'reduce',
    locale: 'en-US',
    timezoneId: 'UTC',
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  const tab: Tab = { context, page, problems: [], allow: [], allowCSP: [], allowedCSP: [] }
  watch(tab)
  return tab
}

function watch(tab: Tab) {
  tab.page.on('pageerror', (e) => tab.problems.push(`uncaught error in the page: ${e.message}`))
  tab.page.on('console', (m) => {
    if (m.type() !== 'error') return
    const text = m.text()
    if (/Content[- ]Security[- ]Policy/i.test(text)) {
      const pathname = new URL(tab.page.url()).pathname
      if (tab.allowCSP.some((a) => a.message.test(text) && a.path.test(pathname))) tab.allowedCSP.push(`${pathname}: ${text}`)
      else tab.problems.push(`CSP violation: ${text}`)
    }
    // The browser logs every 4xx/5xx answer; the page shows the API's errors to the user.
    else if (/^Failed to load resource: the server responded with a status of [45]\d\d/.test(text)) return
    else if (tab.allow.some((re) => re.test(text))) return
    else tab.problems.push(`console error: ${text}`)
  })
}

/** Fails when the tab saw a CSP violation, an uncaught error or an unexpected console error. */
export function expectNoProblems(tab: Tab) {
  if (tab.problems.length) throw new Error(`the page had problems:\n- ${tab.problems.join('\n- ')}`)
}

/** Closes the tab's context, then fails if it saw problems. */
export async function closeTab(tab: Tab) {
  await tab.context.close()
  expectNoProblems(tab)
}

// ---------------------------------------------------------------------------------------------
// Signing in

/** A user name no other test (or earlier run against the same database) uses. */
export function uniqueUser(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`
}

/** Signs in through the development sign-in form (label "User name", button "Sign in"). */
export async function signIn(page: Page, user: string) {
  await page.goto('/')
  await page.getByLabel('User name').fill(user)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

const SESSION_KEY = 'sapagent.session' // web/src/auth/token.ts

/** Signs in without the form (a token from the dev route into the page's storage), then opens path. */
export async function signInWithToken(page: Page, user: string, pathname = '/'): Promise<string> {
  const t = await devToken(user)
  // Any same-origin page will do to write localStorage; the JSON health page loads no app code.
  await page.goto('/api/health')
  await page.evaluate(([key, value]) => localStorage.setItem(key, value), [SESSION_KEY, JSON.stringify({
    token: t.token, user: t.user, expiresAt: Date.parse(t.expires_at),
  })] as const)
  await page.goto(pathname)
  return t.token
}

// ---------------------------------------------------------------------------------------------
// The API, for setting up data quickly (docs/api.md)

export class ApiFailure extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(`${status} ${code}: ${message}`)
  }
}

/** Calls the dev stack's API as the holder of token (null: no Authorization header). */
export async function call<T = unknown>(token: string | null, method: string, pathname: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' }
  if (token) headers.Authorization = `Bearer ${token}`
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(baseURL + pathname, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  const data = text ? JSON.parse(text) : undefined
  if (!res.ok) throw new ApiFailure(res.status, data?.code ?? '', data?.error ?? text)
  return data as T
}

export async function devToken(user: string): Promise<{ token: string; user: string; expires_at: string }> {
  return call(null, 'POST', '/api/dev/token', { user })
}

export interface Org { id: string; name: string }
export interface Workspace { id: string; org_id: string; name: string }
export interface Agent { id: string; workspace_id: string; name: string }

/** A user with a token and shortcuts for the data most flows start from. */
export async function apiUser(user: string) {
  const { token } = await devToken(user)
  const as = <T>(method: string, pathname: string, body?: unknown) => call<T>(token, method, pathname, body)
  return {
    user,
    token,
    call: as,
    createOrg: (name: string) => as<Org>('POST', '/api/orgs', { name }),
    createWorkspace: (orgId: string, name: string) => as<Workspace>('POST', '/api/workspaces', { org_id: orgId, name }),
    createAgent: (workspaceId: string, name = 'New chat') => as<Agent>('POST', '/api/agents', { workspace_id: workspaceId, name }),
    /** A connection to the built-in simulated landscape (a development server marks it simulated). */
    createSimulatedConnection: (workspaceId: string, name: string, systemType: 'ECC' | 'S4HANA' = 'ECC') =>
      as<{ id: string; name: string }>('POST', `/api/workspaces/${workspaceId}/connections`, { name, system_type: systemType, simulated: true }),
    sendMessage: (agentId: string, content: string) => as<unknown>('POST', `/api/agents/${agentId}/message`, { content }),
  }
}

/** An org and a workspace owned by a new user, for tests that start on a workspace page. */
export async function userWithWorkspace(prefix: string) {
  const u = await apiUser(uniqueUser(prefix))
  const org = await u.createOrg(`${prefix} org`)
  const workspace = await u.createWorkspace(org.id, `${prefix} workspace`)
  return { ...u, org, workspace }
}

// ---------------------------------------------------------------------------------------------
// Forms

/**
 * The error message shown next to a field (ui/controls.tsx TextField: aria-invalid, and the
 * message's element named last in aria-describedby), once it shows; fails when none does.
 */
export async function fieldError(field: Locator, timeout = 10_000): Promise<string> {
  await field.and(field.page().locator('[aria-invalid="true"]')).waitFor({ timeout })
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter((id) => id.endsWith('-error'))
  if (ids.length !== 1) throw new Error(`${field} is invalid but names no error message in aria-describedby`)
  const message = field.page().locator(`[id="${ids[0]}"]`)
  return ((await message.textContent()) ?? '').trim()
}

/**
 * Waits until the element has the attribute with this value: after a click the page re-renders
 * a moment later, so reading the attribute at once may still see the old state.
 */
export async function waitForAttribute(target: Locator, name: string, value: string, timeout = 10_000) {
  await target.and(target.page().locator(`[${name}="${value.replace(/["\\]/g, '\\$&')}"]`)).waitFor({ timeout })
}

// ---------------------------------------------------------------------------------------------
// Keyboard

/** Presses Tab (at most max times) until target has the focus; fails if it never does. */
export async function tabTo(page: Page, target: Locator, max = 40) {
  for (let i = 0; i <= max; i++) {
    if (await isFocused(target)) return
    await page.keyboard.press('Tab')
  }
  throw new Error(`Tab never reached ${target}`)
}

export async function isFocused(target: Locator): Promise<boolean> {
  return (await target.count()) === 1 && target.evaluate((el) => el === document.activeElement)
}

/** Whether the focused element shows a focus indicator (an outline or a ring). */
export async function focusVisible(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const el = document.activeElement
    if (!el || el === document.body) return false
    const s = getComputedStyle(el)
    return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none'
  })
}

// ---------------------------------------------------------------------------------------------
// Screenshots and results

/** Writes docs/screenshots/<name>.png (linked from the README); E2E_SCREENSHOTS=0 skips it. */
export async function screenshot(page: Page, name: string) {
  if (process.env.E2E_SCREENSHOTS === '0') return
  mkdirSync(screenshotsDir, { recursive: true })
  await page.screenshot({ path: path.join(screenshotsDir, `${name}.png`), animations: 'disabled', caret: 'hide' })
}

/** Merges values into e2e/results/<file>.json (summarised in docs/benchmarks.md). */
export function recordResult(file: string, values: Record<string, unknown>) {
  mkdirSync(resultsDir, { recursive: true })
  const p = path.join(resultsDir, `${file}.json`)
  const old = existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')) : {}
  writeFileSync(p, JSON.stringify({ ...old, ...values, measured_at: new Date().toISOString() }, null, 2) + '\n')
}

// ---------------------------------------------------------------------------------------------
// Accessibility (axe-core)

const require = createRequire(import.meta.url)
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

export interface AxeViolation { id: string; impact: string | null; help: string; nodes: string[] }
export interface AxeReport {
  /** Lighthouse-like: passed rules' weight over all applicable rules' weight, 0–100. */
  score: number
  violations: AxeViolation[]
  /** Violations whose impact is serious or critical: a test fails on any. */
  serious: AxeViolation[]
  passes: number
}

// Lighthouse weighs each axe audit by its impact (10 critical, 7 serious, 3 moderate, 1 minor).
const weights: Record<string, number> = { critical: 10, serious: 7, moderate: 3, minor: 1 }

/**
 * Runs axe (WCAG 2.1 A/AA and best practices) on the page as it is. axe is evaluated through the
 * DevTools protocol, which the page's CSP (script-src 'self') does not govern, so the page under
 * test keeps its real policy.
 */
export async function axeCheck(page: Page, opts: { exclude?: string[] } = {}): Promise<AxeReport> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
  const raw = await page.evaluate(async (exclude) => {
    type Rule = { id: string; impact?: string | null; help: string; nodes: { target: unknown[]; impact?: string | null }[] }
    const axe = (window as unknown as { axe: { run: (ctx: unknown, o: unknown) => Promise<{ violations: Rule[]; passes: Rule[] }> } }).axe
    const r = await axe.run({ exclude: exclude.map((s) => [s]) }, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    })
    const shape = (x: Rule) => ({
      id: x.id,
      impact: x.impact ?? x.nodes.map((n) => n.impact).find(Boolean) ?? null,
      help: x.help,
      nodes: x.nodes.map((n) => n.target.join(' ')),
    })
    return { violations: r.violations.map(shape), passes: r.passes.map(shape) }
  }, opts.exclude ?? [])
  const weight = (v: { impact: string | null }) => weights[v.impact ?? 'moderate'] ?? 3
  const passed = raw.passes.reduce((s, p) => s + weight(p), 0)
  const failed = raw.violations.reduce((s, v) => s + weight(v), 0)
  const score = passed + failed === 0 ? 100 : Math.round((100 * passed) / (passed + failed))
  const serious = raw.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  return { score, violations: raw.violations, serious, passes: raw.passes.length }
}

export function describeViolations(vs: AxeViolation[]): string {
  return vs.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).join(', ')}`).join('\n')
}

// ---------------------------------------------------------------------------------------------
// Performance

/**
 * Records the main thread's long tasks (> 50 ms) from the next navigation on; read them with
 * longTasks(page). Init scripts are injected by the DevTools protocol, not governed by the CSP.
 */
export async function watchLongTasks(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __e2eLongTasks: { start: number; duration: number }[] }
    w.__e2eLongTasks = []
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__e2eLongTasks.push({ start: Math.round(e.startTime), duration: Math.round(e.duration) })
      }).observe({ type: 'longtask', buffered: true })
    } catch { /* not supported: the list stays empty */ }
  })
}

/** The long tasks recorded since the page loaded, or since the last resetLongTasks. */
export async function longTasks(page: Page): Promise<{ start: number; duration: number }[]> {
  return page.evaluate(() => (window as unknown as { __e2eLongTasks?: { start: number; duration: number }[] }).__e2eLongTasks ?? [])
}

export async function resetLongTasks(page: Page) {
  await page.evaluate(() => { (window as unknown as { __e2eLongTasks: unknown[] }).__e2eLongTasks = [] })
}

export interface FirstLoad {
  /** Navigation start to the ready selector's element being present and enabled (ms). */
  interactiveMs: number
  domContentLoadedMs: number
  loadMs: number
  firstContentfulPaintMs: number | null
  /** The JavaScript fetched until the page was interactive and loaded. */
  jsFiles: { url: string; bytes: number; gzipBytes: number }[]
  jsBytes: number
  jsGzipBytes: number
}

/**
 * Opens pathname in a fresh context (cold cache) and measures when the element matching ready
 * (a CSS selector) appears enabled, and the JavaScript the load fetched (gzip level 6, what a
 * compressing server or proxy sends; the raw bytes too).
 */
export async function measureFirstLoad(browser: Browser, pathname: string, ready: string): Promise<FirstLoad> {
  const tab = await openTab(browser)
  const { page } = tab
  try {
    await page.addInitScript((selector) => {
      const w = window as unknown as { __e2eReady?: number }
      const check = () => {
        const el = document.querySelector(selector) as HTMLInputElement | HTMLButtonElement | null
        if (el && !el.disabled && w.__e2eReady === undefined) {
          w.__e2eReady = performance.now()
          obs.disconnect()
        }
      }
      const obs = new MutationObserver(check)
      obs.observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['disabled'] })
    }, ready)
    const scripts: Promise<{ url: string; bytes: number; gzipBytes: number } | null>[] = []
    page.on('response', (res) => {
      if (res.request().resourceType() !== 'script') return
      scripts.push(res.body().then((b) => ({ url: new URL(res.url()).pathname, bytes: b.length, gzipBytes: gzipSync(b, { level: 6 }).length })).catch(() => null))
    })
    await page.goto(pathname, { waitUntil: 'load' })
    await page.waitForFunction(() => (window as unknown as { __e2eReady?: number }).__e2eReady !== undefined, null, { timeout: 15_000 })
    const t = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming
      const fcp = performance.getEntriesByName('first-contentful-paint')[0]
      return {
        interactiveMs: (window as unknown as { __e2eReady: number }).__e2eReady,
        domContentLoadedMs: nav.domContentLoadedEventEnd,
        loadMs: nav.loadEventEnd,
        firstContentfulPaintMs: fcp ? fcp.startTime : null,
      }
    })
    const jsFiles = (await Promise.all(scripts)).filter((x): x is NonNullable<typeof x> => x !== null)
    await tab.context.close()
    expectNoProblems(tab)
    const round = (n: number) => Math.round(n * 10) / 10
    return {
      interactiveMs: round(t.interactiveMs),
      domContentLoadedMs: round(t.domContentLoadedMs),
      loadMs: round(t.loadMs),
      firstContentfulPaintMs: t.firstContentfulPaintMs === null ? null : round(t.firstContentfulPaintMs),
      jsFiles,
      jsBytes: jsFiles.reduce((s, f) => s + f.bytes, 0),
      jsGzipBytes: jsFiles.reduce((s, f) => s + f.gzipBytes, 0),
    }
  } catch (e) {
    await tab.context.close().catch(() => {})
    throw e
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
