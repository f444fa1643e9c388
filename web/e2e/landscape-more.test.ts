// The rest of the landscape: the diff between two synced connections, the action log after a
// tool call, and a sync cancelled from its progress bar (the previous index stays in use).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { axeCheck, closeTab, describeViolations, launchBrowser, openTab, signInWithToken, userWithWorkspace } from './lib'

let browser: Browser
beforeAll(async () => { browser = await launchBrowser() })
afterAll(async () => { await browser?.close() })

interface Run { id: string; connection_id: string; status: string }

describe('landscape: diff, action log, cancel', () => {
  it('diffs two connections, lists tool calls and cancels a sync', async () => {
    const u = await userWithWorkspace('diff')
    const ws = u.workspace.id
    const ecc = await u.createSimulatedConnection(ws, 'LeftECC', 'ECC')
    const s4 = await u.createSimulatedConnection(ws, 'RightS4', 'S4HANA')
    for (const c of [ecc, s4]) await u.call('POST', `/api/workspaces/${ws}/index`, { connection_id: c.id, mode: 'full' })
    await expect.poll(async () => {
      const runs = await u.call<{ data: Run[] }>('GET', `/api/workspaces/${ws}/sync-runs`)
      return runs.data.filter((r) => r.status === 'succeeded').length
    }, { timeout: 120_000, interval: 1000 }).toBe(2)

    // A tool call for the action log: a read runs at once on a development server.
    const agent = await u.createAgent(ws)
    await u.sendMessage(agent.id, 'read 5 rows from table T001 on LeftECC')
    await expect.poll(async () => {
      const acts = await u.call<{ data: { tool: string }[] }>('GET', `/api/workspaces/${ws}/actions`)
      return acts.data.length
    }, { timeout: 60_000, interval: 500 }).toBeGreaterThan(0)

    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${ws}/landscape/diff`)
      await page.getByRole('combobox', { name: 'Left connection' }).selectOption({ label: 'LeftECC (ECC)' })
      await page.getByRole('combobox', { name: 'Right connection' }).selectOption({ label: 'RightS4 (S4HANA)' })
      const kinds = page.getByRole('tablist', { name: 'Kind of difference' })
      await kinds.getByRole('tab', { name: /Only left/ }).click()
      const onlyLeft = page.getByRole('table', { name: /Only left objects between/i })
      await onlyLeft.getByRole('row').nth(1).waitFor({ timeout: 30_000 }) // a header row and at least one object
      expect(await onlyLeft.getByRole('row').count()).toBeGreaterThan(1)
      const diffAxe = await axeCheck(page)
      expect(diffAxe.serious, describeViolations(diffAxe.serious)).toEqual([])

      await page.getByRole('navigation', { name: 'Landscape sections' }).getByRole('link', { name: 'Action log' }).click()
      const log = page.getByRole('table', { name: /Tool calls of this workspace/ })
      await log.getByRole('row', { name: /execute_code/ }).first().waitFor({ timeout: 20_000 })
      const logAxe = await axeCheck(page)
      expect(logAxe.serious, describeViolations(logAxe.serious)).toEqual([])

      // Cancel a running sync: the run ends cancelled and the connection keeps its index.
      await page.getByRole('navigation', { name: 'Landscape sections' }).getByRole('link', { name: 'Sync' }).click()
      await page.getByRole('button', { name: 'Start full sync of LeftECC' }).click()
      await page.getByRole('button', { name: 'Cancel sync of LeftECC' }).click({ timeout: 20_000 })
      await expect.poll(async () => {
        const runs = await u.call<{ data: Run[] }>('GET', `/api/workspaces/${ws}/sync-runs`)
        return runs.data.filter((r) => r.connection_id === ecc.id).map((r) => r.status).sort().join(',')
      }, { timeout: 60_000, interval: 500 }).toBe('cancelled,succeeded')
      await page.getByRole('table', { name: 'Sync runs, newest first' }).getByRole('row', { name: /cancelled/ }).waitFor({ timeout: 20_000 })
      const index = await u.call<{ data: { connection_id: string; index: { generation: number } | null }[] }>('GET', `/api/workspaces/${ws}/index`)
      expect(index.data.find((i) => i.connection_id === ecc.id)?.index?.generation).toBe(1)
    } finally {
      await closeTab(tab)
    }
  })
})
