// The sidebar: the organization switcher shows each organization's workspaces, a chat gets its
// title from its first message without a reload, and archiving moves it out of the list (and
// restoring brings it back).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { closeTab, launchBrowser, openTab, signInWithToken, userWithWorkspace } from './lib'

let browser: Browser
beforeAll(async () => { browser = await launchBrowser() })
afterAll(async () => { await browser?.close() })

describe('sidebar', () => {
  it('switches organizations, names a chat live, archives and restores it', async () => {
    const u = await userWithWorkspace('side')
    const other = await u.createOrg('Second org')
    await u.createWorkspace(other.id, 'Other workspace')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${u.workspace.id}`)
      const sidebar = page.getByRole('navigation', { name: 'Sidebar' })
      await sidebar.getByRole('link', { name: 'side workspace' }).waitFor()

      // Another organization: its workspaces, not the first one's.
      await sidebar.getByRole('combobox', { name: 'Organization' }).selectOption({ label: 'Second org' })
      await sidebar.getByRole('link', { name: 'Other workspace' }).waitFor()
      await expect(sidebar.getByRole('link', { name: 'side workspace' }).count()).resolves.toBe(0)
      await sidebar.getByRole('combobox', { name: 'Organization' }).selectOption({ label: 'side org' })
      await sidebar.getByRole('link', { name: 'side workspace' }).click()

      // A new chat takes its title from the first message, live.
      await sidebar.getByRole('button', { name: 'New chat' }).click()
      await page.waitForURL(/\/chat\//)
      const composer = page.getByRole('textbox', { name: 'Message' })
      await composer.fill('e2e: echo quarterly close checklist')
      await composer.press('Enter')
      const chats = sidebar.getByRole('list', { name: 'Chats' })
      await chats.getByRole('link', { name: /quarterly close/i }).waitFor({ timeout: 20_000 })
      await page.getByRole('heading', { level: 1, name: /quarterly close/i }).waitFor()

      // Archive: gone from the list, listed under archived; restore brings it back.
      await page.getByRole('button', { name: 'Archive chat' }).click()
      await page.getByRole('button', { name: 'Restore chat' }).waitFor()
      await expect.poll(() => chats.getByRole('link', { name: /quarterly close/i }).count()).toBe(0)
      await composer.fill('more')
      await expect.poll(() => page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true) // archived: read-only
      await sidebar.getByRole('button', { name: 'Show archived' }).click()
      await sidebar.getByRole('list', { name: 'Archived chats' }).getByRole('link', { name: /quarterly close/i }).waitFor()
      await sidebar.getByRole('button', { name: 'Show chats' }).click()
      await page.getByRole('button', { name: 'Restore chat' }).click()
      await page.getByRole('button', { name: 'Archive chat' }).waitFor()
      await chats.getByRole('link', { name: /quarterly close/i }).waitFor()
      await expect.poll(() => page.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true)
    } finally {
      await closeTab(tab)
    }
  })
})
