// Keyboard-only use: sign in, create the first organization and workspace with Tab and Enter
// only, with a visible focus indicator on every control reached.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { closeTab, focusVisible, launchBrowser, openTab, tabTo, uniqueUser } from './lib'

let browser: Browser
beforeAll(async () => { browser = await launchBrowser() })
afterAll(async () => { await browser?.close() })

/** Tabs to the control, checks that its focus is visible, and types or presses Enter. */
async function reach(page: Page, target: ReturnType<Page['getByRole']>) {
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
