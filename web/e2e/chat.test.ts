// The chat as a person uses it, in a real browser against the dev stack and the offline model
// (e2e/rules.json): a streamed reply and the live title, Markdown, approving and rejecting a
// write, stop and reload mid-stream, two tabs on one conversation, attachments, the full stored
// output of a tool call, the model picker, keyboard-only use and axe. Every test has its own
// user, workspace and conversation, set up through the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Locator, Page } from 'playwright-core'
import {
  apiUser, axeCheck, closeTab, describeViolations, expectNoProblems, focusVisible, launchBrowser, openTab, screenshot,
  signIn, signInWithToken, tabTo, userWithWorkspace, type Tab,
} from './lib'

let browser: Browser
beforeAll(async () => { browser = await launchBrowser() })
afterAll(async () => { await browser?.close() })

type User = Awaited<ReturnType<typeof userWithWorkspace>>

interface Message {
  id: string
  seq: number
  role: string
  content: string
  status: string
  parts: { type: string; name?: string; file_id?: string; content_type?: string; size?: number; tool_call_id?: string; stored?: boolean; rejected?: boolean }[] | null
}
interface Action { tool: string; input: string; success: boolean; decided_by: string }

// The medium reply of rules.json: 160 numbered words, so a duplicated or missing piece shows.
const MEDIUM_REPLY = Array.from({ length: 160 }, (_, i) => `w${String(i + 1).padStart(3, '0')}`).join(' ') + '.'

const messages = async (u: User, agentId: string) => (await u.call<{ data: Message[] }>('GET', `/api/agents/${agentId}/messages?limit=500`)).data
const actions = async (u: User, agentId: string) => (await u.call<{ data: Action[] }>('GET', `/api/agents/${agentId}/actions`)).data

/** Polls until check passes (or fails after timeout ms), for state only the API shows. */
async function until<T>(what: string, get: () => Promise<T>, check: (v: T) => boolean, timeout = 20_000): Promise<T> {
  const end = Date.now() + timeout
  for (;;) {
    const v = await get()
    if (check(v)) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** A new user with a workspace and a conversation, signed in on its chat page. */
async function openChat(prefix: string, opts: { user?: User } = {}) {
  const u = opts.user ?? await userWithWorkspace(prefix)
  const agent = await u.createAgent(u.workspace.id)
  const chatPath = `/w/${u.workspace.id}/chat/${agent.id}`
  const tab = await openTab(browser)
  await signInWithToken(tab.page, u.user, chatPath)
  await chatReady(tab.page)
  return { u, agentId: agent.id, chatPath, tab, page: tab.page }
}

const composer = (page: Page) => page.getByRole('form', { name: 'Send a message' }).getByRole('textbox', { name: 'Message' })
const conversation = (page: Page) => page.getByRole('log', { name: 'Conversation' })
const writing = (page: Page) => conversation(page).getByRole('article', { name: 'Assistant (writing)', exact: true })
const replies = (page: Page) => conversation(page).getByRole('article', { name: 'Assistant', exact: true })
const approval = (page: Page, tool: string) => page.getByRole('region', { name: 'Pending approvals' }).getByRole('region', { name: `Approval for ${tool}` })
const toolCards = (page: Page, tool: string) => conversation(page).getByRole('region', { name: `Tool call ${tool}` })

async function chatReady(page: Page) {
  await conversation(page).waitFor()
  await composer(page).waitFor()
}

async function send(page: Page, text: string) {
  const box = composer(page)
  await box.fill(text)
  await box.press('Enter')
}

/** The conversation's status as the page header shows it. */
async function waitForStatus(page: Page, label: 'Idle' | 'Working…' | 'Waiting for approval') {
  await page.getByRole('main').getByText(label, { exact: true }).first().waitFor()
}

/**
 * Records every text the streaming reply shows (one sample per DOM change), from now on. The
 * observer runs through the DevTools protocol, which the page's CSP does not govern.
 */
async function recordWriting(page: Page) {
  await page.evaluate(() => {
    const w = window as unknown as { __e2eWriting: string[] }
    w.__e2eWriting = []
    new MutationObserver(() => {
      const el = document.querySelector('article[aria-label="Assistant (writing)"]')
      const t = el?.textContent
      if (t && w.__e2eWriting[w.__e2eWriting.length - 1] !== t) w.__e2eWriting.push(t)
    }).observe(document.body, { childList: true, subtree: true, characterData: true })
  })
}
const writingSamples = (page: Page) => page.evaluate(() => (window as unknown as { __e2eWriting: string[] }).__e2eWriting)

/** Every text shown while streaming was a beginning of the final text: no piece twice, none lost. */
function expectPrefixes(samples: string[], final: string) {
  for (const s of samples) {
    if (!final.startsWith(s)) throw new Error(`the streamed text is not a beginning of the reply:\n  shown: …${s.slice(-80)}\n  final: ${final.slice(0, s.length + 20).slice(-100)}`)
  }
}

const textOf = async (l: Locator) => ((await l.textContent()) ?? '').trim()

describe('chat', () => {
  it('streams a reply, renames the chat in the sidebar live and renders Markdown', async () => {
    const u = await userWithWorkspace('chat')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signIn(page, u.user)
      const sidebar = page.getByRole('navigation', { name: 'Sidebar' })
      await sidebar.getByRole('link', { name: u.workspace.name }).click()
      await sidebar.getByRole('button', { name: 'New chat' }).click()
      await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/)
      const agentId = page.url().split('/').pop()!
      await chatReady(page)
      const chats = sidebar.getByRole('list', { name: 'Chats' })
      await chats.getByRole('link', { name: 'New chat' }).waitFor()

      // A marker that a reload would wipe: the title must arrive without one.
      await page.evaluate(() => { (window as unknown as { __e2eSamePage: boolean }).__e2eSamePage = true })
      await recordWriting(page)
      await send(page, 'e2e: write a medium reply')
      await conversation(page).getByRole('article', { name: 'You' }).filter({ hasText: 'e2e: write a medium reply' }).waitFor()
      await writing(page).waitFor()
      await replies(page).first().waitFor({ timeout: 20_000 })
      await expect.poll(() => textOf(replies(page).first())).toBe(MEDIUM_REPLY)
      await expect(writing(page).count()).resolves.toBe(0)
      const samples = await writingSamples(page)
      expect(samples.length, 'the reply should grow in several steps').toBeGreaterThanOrEqual(5)
      expectPrefixes(samples, MEDIUM_REPLY)
      expect(samples[0].length).toBeLessThan(MEDIUM_REPLY.length / 2)

      // title_update: the sidebar and the page's title follow without a reload.
      await chats.getByRole('link', { name: 'e2e: write a medium reply' }).waitFor()
      await expect.poll(() => page.title()).toBe('e2e: write a medium reply · sapagent')
      expect(await page.evaluate(() => (window as unknown as { __e2eSamePage?: boolean }).__e2eSamePage)).toBe(true)

      // A Markdown reply: a real table and highlighted code.
      await send(page, 'e2e: markdown')
      const md = replies(page).nth(1)
      await md.getByRole('table').waitFor()
      await md.getByRole('columnheader', { name: 'Material' }).waitFor()
      await md.getByRole('cell', { name: 'M-02' }).waitFor()
      const code = md.locator('pre code.hljs')
      await expect(code.textContent()).resolves.toContain("print('hello')")
      expect(await code.locator('span[class^="hljs-"]').count(), 'the code is highlighted').toBeGreaterThan(0)
      expect(await code.getAttribute('class')).toContain('language-python')

      const stored = await messages(u, agentId)
      expect(stored.filter((m) => m.role === 'assistant').map((m) => m.content)[0]).toBe(MEDIUM_REPLY)
      await waitForStatus(page, 'Idle')
      // The sidebar's working dot goes with the turn, without a reload either.
      await expect.poll(() => chats.locator('[aria-label="working"]').count()).toBe(0)
    } finally {
      await closeTab(tab)
    }
  })

  it('approves one write and rejects another with a reason; only the approved one runs', async () => {
    // A fixed user name: the screenshots show it.
    const base = await apiUser('dana')
    const org = await base.createOrg('Acme Trading')
    const workspace = await base.createWorkspace(org.id, 'Finance')
    const { u, agentId, tab, page } = await openChat('approve', { user: { ...base, org, workspace } })
    try {
      await send(page, 'e2e: markdown')
      await replies(page).first().getByRole('table').waitFor()

      await send(page, 'save a note titled Alpha: ship the pallets')
      const first = approval(page, 'save_note')
      await first.waitFor()
      await first.getByRole('textbox', { name: 'Reason (optional)' }).waitFor()
      await first.getByRole('button', { name: 'Reject' }).waitFor()
      await expect(first.textContent()).resolves.toContain('ship the pallets')
      await waitForStatus(page, 'Waiting for approval')
      const chats = page.getByRole('navigation', { name: 'Sidebar' }).getByRole('list', { name: 'Chats' })
      await chats.locator('[aria-label="waiting for approval"]').waitFor()
      await toolCards(page, 'save_note').first().getByText('Waiting for approval', { exact: true }).waitFor()

      const axe = await axeCheck(page)
      expect(axe.serious, describeViolations(axe.serious)).toEqual([])
      expect(axe.score).toBeGreaterThanOrEqual(95)
      await screenshot(page, 'approval')

      await first.getByRole('button', { name: 'Approve' }).click()
      await page.getByRole('region', { name: 'Pending approvals' }).waitFor({ state: 'detached' })
      await toolCards(page, 'save_note').first().getByText('Done', { exact: true }).waitFor()
      await waitForStatus(page, 'Idle')
      await expect.poll(() => chats.locator('[aria-label="waiting for approval"], [aria-label="working"]').count()).toBe(0)
      await screenshot(page, 'chat')

      await send(page, 'save a note titled Beta: hold the pallets')
      const second = approval(page, 'save_note')
      await second.waitFor()
      await expect(second.textContent()).resolves.toContain('hold the pallets')
      await second.getByRole('textbox', { name: 'Reason (optional)' }).fill('Wrong warehouse')
      await second.getByRole('button', { name: 'Reject' }).click()
      await page.getByRole('region', { name: 'Pending approvals' }).waitFor({ state: 'detached' })
      const rejected = toolCards(page, 'save_note').nth(1)
      await rejected.getByText('Rejected', { exact: true }).waitFor()
      await rejected.getByText('Reason: Wrong warehouse').waitFor()
      await expect(toolCards(page, 'save_note').first().getByText('Done', { exact: true }).count()).resolves.toBe(1)
      await waitForStatus(page, 'Idle')

      // The API agrees: one note written (Alpha, approved by dana), nothing for Beta.
      const writes = (await actions(u, agentId)).filter((a) => a.tool === 'save_note')
      expect(writes).toHaveLength(1)
      expect(writes[0].input).toContain('Alpha')
      expect(writes[0].success).toBe(true)
      expect(writes[0].decided_by).toBe('dana')
      const results = (await messages(u, agentId)).filter((m) => m.role === 'tool')
      expect(results).toHaveLength(2)
      expect(results[1].content).toContain('rejected')
    } finally {
      await closeTab(tab)
    }
  })

  it('stops a reply mid-stream and keeps the partial text as stored', async () => {
    const { u, agentId, tab, page } = await openChat('stop')
    try {
      await send(page, 'e2e: write slowly')
      await writing(page).waitFor()
      await page.waitForFunction(() => (document.querySelector('article[aria-label="Assistant (writing)"]')?.textContent ?? '').length > 150)
      await waitForStatus(page, 'Working…')

      // axe while the reply streams.
      const axe = await axeCheck(page)
      expect(axe.serious, describeViolations(axe.serious)).toEqual([])
      expect(axe.score).toBeGreaterThanOrEqual(95)

      const shown = await textOf(writing(page))
      await page.getByRole('button', { name: 'Stop' }).click()
      const reply = replies(page).first()
      await reply.getByText('Stopped', { exact: true }).waitFor()
      await waitForStatus(page, 'Idle')
      await expect(page.getByRole('button', { name: 'Stop' }).count()).resolves.toBe(0)
      await expect(writing(page).count()).resolves.toBe(0)

      const stored = (await messages(u, agentId)).filter((m) => m.role === 'assistant')
      expect(stored).toHaveLength(1)
      expect(stored[0].status).toBe('stopped')
      const content = stored[0].content.trim()
      expect(content.startsWith(shown), 'the stored text begins with what was shown before Stop').toBe(true)
      expect(content.length).toBeLessThan(2000) // stopped well before the end (~2,300 characters)
      await expect.poll(async () => (await textOf(reply)).replace(/Stopped$/, '').trim()).toBe(content)
    } finally {
      await closeTab(tab)
    }
  })

  it('reloaded mid-stream, shows the partial reply from init and continues without a duplicate or a gap', async () => {
    const { u, agentId, tab, page } = await openChat('reload')
    try {
      await send(page, 'e2e: write a medium reply')
      await page.waitForFunction(() => (document.querySelector('article[aria-label="Assistant (writing)"]')?.textContent ?? '').length > 100)
      const before = await textOf(writing(page))

      await page.reload()
      await chatReady(page)
      await writing(page).waitFor()
      const after = await textOf(writing(page))
      await recordWriting(page)
      expect(after.length, 'the partial text is there at once (from init)').toBeGreaterThanOrEqual(before.length)
      expect(after.startsWith(before)).toBe(true)

      await replies(page).first().waitFor({ timeout: 20_000 })
      await expect.poll(() => textOf(replies(page).first())).toBe(MEDIUM_REPLY)
      expectPrefixes([after, ...(await writingSamples(page))], MEDIUM_REPLY)
      const stored = (await messages(u, agentId)).filter((m) => m.role === 'assistant')
      expect(stored.map((m) => m.content)).toEqual([MEDIUM_REPLY])
      // One user message, one reply: nothing shown twice after the reload.
      await expect(conversation(page).getByRole('article').count()).resolves.toBe(2)
    } finally {
      await closeTab(tab)
    }
  })

  it('keeps two tabs on one conversation in step', async () => {
    const a = await openChat('tabs')
    const b: Tab = await openTab(browser, { context: a.tab.context })
    try {
      await b.page.goto(a.chatPath)
      await chatReady(b.page)
      await recordWriting(b.page)

      await send(a.page, 'e2e: write a medium reply')
      await conversation(b.page).getByRole('article', { name: 'You' }).filter({ hasText: 'e2e: write a medium reply' }).waitFor()
      await writing(b.page).waitFor()
      await replies(b.page).first().waitFor({ timeout: 20_000 })
      await expect.poll(() => textOf(replies(b.page).first())).toBe(MEDIUM_REPLY)
      const samples = await writingSamples(b.page)
      expect(samples.length, 'tab B saw the reply stream').toBeGreaterThanOrEqual(5)
      expectPrefixes(samples, MEDIUM_REPLY)

      await send(a.page, 'save a note titled Shared: decided in the other tab')
      await approval(a.page, 'save_note').waitFor()
      const inB = approval(b.page, 'save_note')
      await inB.waitFor()
      await inB.getByRole('button', { name: 'Approve' }).click()
      await a.page.getByRole('region', { name: 'Pending approvals' }).waitFor({ state: 'detached' })
      await toolCards(a.page, 'save_note').getByText('Done', { exact: true }).waitFor()
      await toolCards(b.page, 'save_note').getByText('Done', { exact: true }).waitFor()
      expect((await actions(a.u, a.agentId)).filter((x) => x.tool === 'save_note')).toHaveLength(1)
    } finally {
      expectNoProblems(b)
      await closeTab(a.tab)
    }
  })

  it('attaches files by the file input and by drag and drop', async () => {
    const { u, agentId, tab, page } = await openChat('files')
    try {
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64')
      await page.getByLabel('Files to attach').setInputFiles([
        { name: 'pixel.png', mimeType: 'image/png', buffer: png },
        { name: 'stock.txt', mimeType: 'text/plain', buffer: Buffer.from('Plant 1000: 42 pallets\n') },
      ])
      const chips = page.getByRole('list', { name: 'Attachments' })
      await chips.getByRole('button', { name: 'Remove pixel.png' }).waitFor()
      await chips.getByRole('button', { name: 'Remove stock.txt' }).waitFor()
      await expect.poll(() => chips.getByText('uploading…').count()).toBe(0)
      await expect(chips.getByRole('alert').count()).resolves.toBe(0)
      await send(page, 'e2e: echo two files')
      const mine = conversation(page).getByRole('article', { name: 'You', exact: true }).filter({ hasText: 'e2e: echo two files' })
      await mine.getByRole('button', { name: 'Download pixel.png' }).waitFor()
      await mine.getByRole('button', { name: 'Download stock.txt' }).waitFor()
      // The model got the text file's content (the offline model echoes what it was sent).
      await replies(page).filter({ hasText: 'Plant 1000: 42 pallets' }).waitFor()

      // A stored file downloads (the token travels in a header, never in a URL).
      const [download] = await Promise.all([page.waitForEvent('download'), mine.getByRole('button', { name: 'Download stock.txt' }).click()])
      expect(download.suggestedFilename()).toBe('stock.txt')

      // Drag and drop two files onto the composer, remove one, send.
      await page.evaluate(() => {
        const dt = new DataTransfer()
        dt.items.add(new File(['dropped text\n'], 'dropped.txt', { type: 'text/plain' }))
        dt.items.add(new File(['a,b\n1,2\n'], 'extra.csv', { type: 'text/csv' }))
        const form = document.querySelector('form[aria-label="Send a message"]')!
        form.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }))
        form.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }))
      })
      await chips.getByRole('button', { name: 'Remove dropped.txt' }).waitFor()
      await chips.getByRole('button', { name: 'Remove extra.csv' }).click()
      await expect.poll(() => chips.getByText('uploading…').count()).toBe(0)
      await expect(chips.getByRole('listitem').count()).resolves.toBe(1)
      await send(page, 'e2e: echo one dropped file')
      const dropped = conversation(page).getByRole('article', { name: 'You', exact: true }).filter({ hasText: 'e2e: echo one dropped file' })
      await dropped.getByRole('button', { name: 'Download dropped.txt' }).waitFor()
      await replies(page).filter({ hasText: 'dropped text' }).waitFor()

      const users = (await messages(u, agentId)).filter((m) => m.role === 'user')
      const files = users.map((m) => (m.parts ?? []).filter((p) => p.type === 'file').map((p) => `${p.name} ${p.content_type}`))
      expect(files[0]).toEqual([expect.stringMatching(/^pixel\.png image\/png/), expect.stringMatching(/^stock\.txt text\/plain/)])
      expect(files[1]).toEqual([expect.stringMatching(/^dropped\.txt text\/plain/)])
    } finally {
      await closeTab(tab)
    }
  })

  it('loads the full stored output of a tool call on demand', async () => {
    const u = await userWithWorkspace('output')
    await u.call('PUT', `/api/workspaces/${u.workspace.id}/tool-policy`, { policy: 'run_everything' })
    const agent = await u.createAgent(u.workspace.id)
    // Two ~10 KB notes, saved without asking (run_everything), before the page opens.
    await u.sendMessage(agent.id, 'e2e: save two big notes')
    await until('the two notes', () => actions(u, agent.id), (as) => as.filter((a) => a.tool === 'save_note' && a.success).length === 2)
    await until('the turn to end', () => u.call<{ status: string }>('GET', `/api/agents/${agent.id}`), (a) => a.status === 'idle')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${u.workspace.id}/chat/${agent.id}`)
      await chatReady(page)
      await send(page, 'list my notes')
      const card = toolCards(page, 'list_notes')
      await card.getByText('Done', { exact: true }).waitFor()
      // The call just finished: the card knows its output is stored from the live preview.
      const summary = card.getByText(/^Result preview \(\d+\.\d KB in all\)$/)
      await summary.click()
      const output = card.locator('pre').last()
      const preview = await output.textContent()
      expect(preview).toContain('[output truncated')

      // The card offers it before the step's results are stored: wait for them in the API.
      const stored = await until('the stored list_notes result', () => messages(u, agent.id),
        (ms) => ms.some((m) => (m.parts ?? []).some((p) => p.type === 'tool_result' && p.stored)))
      const callId = stored.flatMap((m) => m.parts ?? []).find((p) => p.type === 'tool_result' && p.stored)!.tool_call_id
      const full = await u.call<{ content: string; size: number }>('GET', `/api/agents/${agent.id}/tool-outputs/${callId}`)
      expect(full.size).toBeGreaterThan(19_000)

      await card.getByRole('button', { name: 'Show full output' }).click()
      await card.getByText('Full output', { exact: false }).waitFor()
      await expect.poll(async () => (await output.textContent())?.length).toBe(full.content.length)
      await expect(output.textContent()).resolves.toContain('Big note two')
      await expect(card.getByRole('button', { name: 'Show full output' }).count()).resolves.toBe(0)
    } finally {
      await closeTab(tab)
    }
  })

  it('changes the conversation\'s model with the picker', async () => {
    const { u, agentId, tab, page } = await openChat('model')
    try {
      const { data: models } = await u.call<{ data: { id: string; default: boolean }[] }>('GET', '/api/models')
      expect(models.length).toBeGreaterThan(0)
      const select = page.getByRole('combobox', { name: 'Model' })
      await select.waitFor()
      const values = await select.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
      expect(values).toEqual(['', ...models.map((m) => m.id)])

      const pick = models[models.length - 1].id
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/agents/${agentId}`) && r.ok()),
        select.selectOption(pick),
      ])
      await expect.poll(() => select.inputValue()).toBe(pick)
      expect((await u.call<{ model: string }>('GET', `/api/agents/${agentId}`)).model).toBe(pick)

      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith(`/api/agents/${agentId}`) && r.ok()),
        select.selectOption(''),
      ])
      expect((await u.call<{ model: string }>('GET', `/api/agents/${agentId}`)).model).toBe('')
    } finally {
      await closeTab(tab)
    }
  })

  it('works with the keyboard only: Tab to the message box, Enter sends, Tab to Approve, Enter decides', async () => {
    const { u, agentId, tab, page } = await openChat('keys')
    try {
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
      const box = composer(page)
      await tabTo(page, box, 60)
      expect(await focusVisible(page)).toBe(true)
      await page.keyboard.type('save a note titled Keys: typed only')
      await page.keyboard.press('Enter')
      await expect(box.inputValue()).resolves.toBe('')

      const approve = approval(page, 'save_note').getByRole('button', { name: 'Approve' })
      await approve.waitFor()
      await tabTo(page, approve, 80)
      expect(await focusVisible(page), 'Approve shows its focus').toBe(true)
      await page.keyboard.press('Enter')
      await toolCards(page, 'save_note').getByText('Done', { exact: true }).waitFor()
      await waitForStatus(page, 'Idle')
      const writes = (await actions(u, agentId)).filter((a) => a.tool === 'save_note')
      expect(writes.map((a) => a.input)).toEqual([expect.stringContaining('Keys')])
    } finally {
      await closeTab(tab)
    }
  })
})
