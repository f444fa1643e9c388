// Keyboard-only use with Tab and Enter only, with a visible focus indicator on every control
// reached: sign in and create the first organization and workspace; set up a connection through
// the wizard; start a sync and open the Clean Core page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { closeTab, focusVisible, launchBrowser, openTab, signInWithToken, tabTo, uniqueUser, userWithWorkspace } from './lib'

let browser: Browser
beforeAll(async () => { browser = await launchBrowser() })
afterAll(async () => { await browser?.close() })

/** Tabs to the control, checks that its focus is visible, and types or presses Enter. */
async function reach(page: Page, target: ReturnType<Page['getByRole']>) {
  await target.waitFor() // rendered first: Tab cannot reach what is not on the page yet
  await tabTo(page, target)
  expect(await focusVisible(page), `no visible focus on ${target}`).toBe(true)
}

describe('keyboard only', () => {
  it('signs in and creates an organization and a workspace with Tab and Enter', async () => {
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await page.goto('/')
      const user = page.getByRole('textbox', { name: 'User name' })
      await reach(page, user)
      await page.keyboard.type(uniqueUser('kim'))
      await reach(page, page.getByRole('button', { name: 'Sign in' }))
      await page.keyboard.press('Enter')

      const org = page.getByRole('textbox', { name: 'Organization name' })
      await org.waitFor()
      await reach(page, org)
      await page.keyboard.type('Kim Trading')
      await reach(page, page.getByRole('button', { name: 'Create organization' }))
      await page.keyboard.press('Enter')

      const ws = page.getByRole('textbox', { name: 'Workspace name' })
      await ws.waitFor()
      await reach(page, ws)
      await page.keyboard.type('Warehouse')
      // Enter in the field submits the form, as in any HTML form.
      await page.keyboard.press('Enter')
      await page.waitForURL(/\/w\/[0-9a-f-]+\//)

      // The workspace is in the sidebar and opens with Enter.
      const link = page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Warehouse' })
      await link.waitFor()
      await reach(page, link)
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { level: 1, name: 'Warehouse' }).waitFor()
    } finally {
      await closeTab(tab)
    }
  })

  it('creates a connection through the wizard, syncs it and opens Clean Core with the keyboard', async () => {
    const u = await userWithWorkspace('kbd')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${u.workspace.id}/settings/connections`)
      await reach(page, page.getByRole('button', { name: 'New connection' }))
      await page.keyboard.press('Enter')
      const dialog = page.getByRole('dialog', { name: 'New connection' })
      await dialog.waitFor()
      await reach(page, dialog.getByRole('textbox', { name: 'Connection name' }))
      await page.keyboard.type('Keyboard ECC')
      await reach(page, dialog.getByRole('button', { name: 'Next: test connection' }))
      await page.keyboard.press('Enter')
      await reach(page, dialog.getByRole('button', { name: 'Run test' }))
      await page.keyboard.press('Enter')
      await dialog.getByText('All checks passed.').waitFor({ timeout: 20_000 })
      await reach(page, dialog.getByRole('button', { name: 'Save connection' }))
      await page.keyboard.press('Enter')
      await page.getByRole('region', { name: 'Connection Keyboard ECC' }).waitFor({ timeout: 20_000 })

      // The sidebar's Landscape link, the Sync section, the start button: Tab and Enter only.
      await reach(page, page.getByRole('navigation', { name: 'Sidebar' }).getByRole('link', { name: 'Landscape' }))
      await page.keyboard.press('Enter')
      const sections = page.getByRole('navigation', { name: 'Landscape sections' })
      await sections.waitFor()
      await reach(page, sections.getByRole('link', { name: 'Sync' }))
      await page.keyboard.press('Enter')
      await reach(page, page.getByRole('button', { name: 'Start full sync of Keyboard ECC' }))
      await page.keyboard.press('Enter')
      await page.getByText('succeeded').first().waitFor({ timeout: 120_000 })
      await reach(page, sections.getByRole('link', { name: 'Clean Core' }))
      await page.keyboard.press('Enter')
      await page.getByRole('img', { name: /^Clean Core distribution/ }).waitFor({ timeout: 20_000 })
    } finally {
      await closeTab(tab)
    }
  })

  it('offers a skip link as the first stop after sign-in', async () => {
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await page.goto('/')
      await page.getByRole('textbox', { name: 'User name' }).focus()
      await page.keyboard.type(uniqueUser('lee'))
      await page.keyboard.press('Enter')
      await page.getByRole('textbox', { name: 'Organization name' }).waitFor()
      // The skip link is the first stop in the tab order, shows when focused and moves the focus
      // past the sidebar.
      const first = await page.evaluate(() => {
        const all = [...document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, [tabindex]')]
        return all.find((el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled)?.textContent
      })
      expect(first).toBe('Skip to content')
      const skip = page.getByRole('link', { name: 'Skip to content' })
      await skip.focus()
      expect(await focusVisible(page)).toBe(true)
      await page.keyboard.press('Enter')
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('main')
    } finally {
      await closeTab(tab)
    }
  })
})
