// Sign in, create the first organization and workspace through the onboarding forms, land on the
// workspace page; axe on the sign-in and workspace pages; screenshots of both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { axeCheck, closeTab, describeViolations, launchBrowser, openTab, recordResult, screenshot, signIn, uniqueUser } from './lib'

let browser: Browser
beforeAll(async () => { browser = await launchBrowser() })
afterAll(async () => { await browser?.close() })

describe('sign-in and onboarding', () => {
  it('signs in, creates an organization and a workspace, and opens the workspace page', async () => {
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await page.goto('/')
      await page.getByRole('heading', { name: 'Sign in to sapagent' }).waitFor()
      await expect(page.getByRole('button', { name: 'Sign in' }).isDisabled()).resolves.toBe(true)
      const signInAxe = await axeCheck(page)
      expect(signInAxe.serious, describeViolations(signInAxe.serious)).toEqual([])
      expect(signInAxe.passes).toBeGreaterThan(10) // axe really ran
      expect(signInAxe.score).toBeGreaterThanOrEqual(95)
      await screenshot(page, 'sign-in')

      // A fixed name (each run has a fresh database) keeps the screenshot the same from run to run.
      await signIn(page, 'ada')
      await page.getByRole('heading', { name: 'Welcome to sapagent' }).waitFor()
      await page.getByLabel('Organization name').fill('Ada Logistics')
      await page.getByRole('button', { name: 'Create organization' }).click()

      await page.getByRole('heading', { name: 'New workspace in Ada Logistics' }).waitFor()
      await page.getByLabel('Workspace name').fill('Plant 1000')
      await page.getByRole('button', { name: 'Create workspace' }).click()
      await page.waitForURL(/\/w\/[0-9a-f-]+\//)

      // The sidebar lists the new workspace; it opens the workspace page.
      const sidebar = page.getByRole('navigation', { name: 'Sidebar' })
      await expect(sidebar.getByRole('combobox', { name: 'Organization' }).inputValue()).resolves.not.toBe('')
      await sidebar.getByRole('link', { name: 'Plant 1000' }).click()
      await page.getByRole('heading', { level: 1, name: 'Plant 1000' }).waitFor()
      await page.getByRole('region', { name: 'SAP connections' }).waitFor()
      await page.getByRole('region', { name: 'Recent chats' }).waitFor()
      await expect(sidebar.getByRole('button', { name: 'New chat' }).isEnabled()).resolves.toBe(true)

      const workspaceAxe = await axeCheck(page)
      expect(workspaceAxe.serious, describeViolations(workspaceAxe.serious)).toEqual([])
      expect(workspaceAxe.score).toBeGreaterThanOrEqual(95)
      await screenshot(page, 'workspace')

      recordResult('accessibility', {
        sign_in: { score: signInAxe.score, rules_passed: signInAxe.passes, violations: signInAxe.violations.map((v) => `${v.id} (${v.impact})`) },
        workspace: { score: workspaceAxe.score, rules_passed: workspaceAxe.passes, violations: workspaceAxe.violations.map((v) => `${v.id} (${v.impact})`) },
      })
    } finally {
      await closeTab(tab)
    }
  })

  it('shows the API error next to the user name field', async () => {
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await page.goto('/')
      await page.getByLabel('User name').fill('../etc')
      await page.getByRole('button', { name: 'Sign in' }).click()
      const field = page.getByLabel('User name')
      await page.waitForFunction(() => document.querySelector('input[aria-invalid="true"]') !== null)
      await expect(field.getAttribute('aria-invalid')).resolves.toBe('true')
      // The message is tied to the field (aria-describedby), so a screen reader reads it with it.
      const describedBy = await field.getAttribute('aria-describedby')
      expect(describedBy).toBeTruthy()
      const message = await page.locator(`[id="${describedBy!.split(' ').pop()}"]`).textContent()
      expect(message?.length).toBeGreaterThan(0)
    } finally {
      await closeTab(tab)
    }
  })

  it('keeps the user signed in across a reload and signs out', async () => {
    const tab = await openTab(browser)
    const { page } = tab
    try {
      const user = uniqueUser('ben')
      await signIn(page, user)
      await page.reload()
      const sidebar = page.getByRole('navigation', { name: 'Sidebar' })
      await sidebar.getByText(user).waitFor()
      await sidebar.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      // The token is never put in the page's URL.
      expect(page.url()).not.toMatch(/token|eyJ/)
    } finally {
      await closeTab(tab)
    }
  })
})
