// Workspace settings as an admin uses them: a simulated connection through the setup wizard
// (test before save), the API's errors next to the fields they concern, a write-only secret and
// an own SAP login that are never shown back, members, the tool policy; axe on every tab.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import {
  apiUser, axeCheck, closeTab, describeViolations, fieldError, launchBrowser, openTab, recordResult, screenshot,
  signInWithToken, uniqueUser, userWithWorkspace, type AxeReport,
} from './lib'

let browser: Browser
beforeAll(async () => { browser = await launchBrowser() })
afterAll(async () => { await browser?.close() })

const CHECKS = ['Connect and log on', 'System type matches', 'Read a table (T000)', 'Read function metadata', 'Search the repository']

/** Fails on a serious axe violation or a score under 95; returns the report for the record. */
async function expectAccessible(page: Page, what: string): Promise<AxeReport> {
  const r = await axeCheck(page)
  expect(r.serious, `${what}: ${describeViolations(r.serious)}`).toEqual([])
  expect(r.passes, `${what}: axe did not run`).toBeGreaterThan(10)
  expect(r.score, `${what}: ${describeViolations(r.violations)}`).toBeGreaterThanOrEqual(95)
  return r
}

const summary = (r: AxeReport) => ({ score: r.score, rules_passed: r.passes, violations: r.violations.map((v) => `${v.id} (${v.impact})`) })

/** A random value no page text contains by chance. */
const secretValue = (what: string) => `${what}-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`

/** Whether the value shows anywhere a person (or a script reading the DOM) could see it. */
async function pageShows(page: Page, value: string): Promise<boolean> {
  return page.evaluate((v) => {
    const inputs = [...document.querySelectorAll('input, textarea')].map((el) => (el as HTMLInputElement).value)
    return document.documentElement.outerHTML.includes(v) || document.body.innerText.includes(v) || inputs.some((x) => x.includes(v)) || location.href.includes(v)
  }, value)
}

describe('workspace settings', () => {
  it('creates a simulated connection through the wizard after a passing test', async () => {
    // Fixed names (each run has a fresh database) keep the screenshots the same from run to run.
    const u = await apiUser('grace')
    const org = await u.createOrg('Grace Manufacturing')
    const ws = await u.createWorkspace(org.id, 'Plant 2000')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${ws.id}/settings/connections`)
      const nav = page.getByRole('navigation', { name: 'Workspace settings' })
      await expect(nav.getByRole('link', { name: 'Connections' }).getAttribute('aria-current')).resolves.toBe('page')
      await page.getByText('No connections yet.').waitFor()

      await page.getByRole('button', { name: 'New connection' }).click()
      const wizard = page.getByRole('dialog', { name: 'New connection' })
      await wizard.waitFor()
      const next = wizard.getByRole('button', { name: 'Next: test connection' })
      await expect(next.isDisabled()).resolves.toBe(true) // a name comes first
      await wizard.getByLabel('Connection name').fill('ERP Production')
      await wizard.getByLabel('System type').selectOption('ECC')
      await expect(wizard.getByLabel('Connector URL').inputValue()).resolves.toBe('') // empty: the simulated system
      await expectAccessible(page, 'wizard, settings step')
      await next.click()

      // Step 2: the unsaved settings are tested; every check passes against the simulated system.
      await wizard.getByRole('listitem').filter({ hasText: '2. Test and save' }).and(wizard.locator('[aria-current="step"]')).waitFor()
      await wizard.getByRole('button', { name: 'Run test' }).click()
      const result = wizard.getByRole('status', { name: 'Connection test result' })
      await result.waitFor()
      await expect(result.innerText()).resolves.toContain('All checks passed.')
      const lines = await result.getByRole('listitem').allInnerTexts()
      expect(lines).toHaveLength(5)
      for (const [i, label] of CHECKS.entries()) expect(lines[i]).toMatch(new RegExp(`^\\W*${label.replace(/[()]/g, '\\$&')}:\\s+ok\\b`))
      const wizardAxe = await expectAccessible(page, 'wizard, test step')
      await screenshot(page, 'settings-wizard')

      await wizard.getByRole('button', { name: 'Save connection' }).click()
      await wizard.waitFor({ state: 'detached' })
      const conn = page.getByRole('region', { name: 'Connection ERP Production' })
      await conn.waitFor()
      await expect(conn.innerText()).resolves.toMatch(/Connector\s+simulated/)
      await expect(conn.innerText()).resolves.toMatch(/System type\s+ECC/)
      // The page's health check reaches the simulated connector.
      await conn.getByText(/^reachable, \d+ ms/).waitFor()
      for (const action of ['Test', 'Edit', 'Secrets', 'Delete']) await conn.getByRole('button', { name: `${action} ERP Production` }).waitFor()
      // The server has it too (not only the page's cache).
      const saved = await u.call<{ data: { name: string; simulated: boolean }[] }>('GET', `/api/workspaces/${ws.id}/connections`)
      expect(saved.data.map((c) => [c.name, c.simulated])).toEqual([['ERP Production', true]])

      // The saved connection's own test (not the preview) passes as well.
      await conn.getByRole('button', { name: 'Test ERP Production' }).click()
      await expect(conn.getByRole('status', { name: 'Connection test result' }).innerText()).resolves.toContain('All checks passed.')
      const connectionsAxe = await expectAccessible(page, 'connections tab')
      await page.mouse.move(0, 0) // no hover highlight in the screenshot
      await screenshot(page, 'settings-connections')
      // A dialog closes on a click outside it (the backdrop is the page's own, not Radix's Overlay).
      await conn.getByRole('button', { name: 'Edit ERP Production' }).click()
      const edit = page.getByRole('dialog', { name: 'Edit connection ERP Production' })
      await expect(edit.getByLabel('Connection name').inputValue()).resolves.toBe('ERP Production')
      await page.mouse.click(5, 5)
      await edit.waitFor({ state: 'detached' })
      recordResult('accessibility', { settings_wizard: summary(wizardAxe), settings_connections: summary(connectionsAxe) })
    } finally {
      await closeTab(tab)
    }
  })

  it('shows the API error under Connector URL and under Delta sync (cron)', async () => {
    const u = await userWithWorkspace('errs')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${u.workspace.id}/settings/connections`)
      await page.getByRole('button', { name: 'New connection' }).click()
      const wizard = page.getByRole('dialog', { name: 'New connection' })
      await wizard.getByLabel('Connection name').fill('Metadata service')
      // The cloud metadata address: the server's URL guard refuses it (blocked_url).
      await wizard.getByLabel('Connector URL').fill('http://169.254.169.254')
      await wizard.getByRole('button', { name: 'Next: test connection' }).click()
      await wizard.getByRole('button', { name: 'Run test' }).click()
      // The error sends the person back to the settings step, under the field it concerns.
      const url = wizard.getByLabel('Connector URL')
      const urlError = await fieldError(url)
      expect(urlError.length).toBeGreaterThan(10)
      expect(urlError).not.toMatch(/^(error|request failed)/i)
      await expect(url.inputValue()).resolves.toBe('http://169.254.169.254') // nothing typed is lost
      await expect(wizard.getByLabel('Connection name').getAttribute('aria-invalid')).resolves.toBeNull()
      await expect(wizard.getByRole('status', { name: 'Connection test result' }).count()).resolves.toBe(0)
      const errorAxe = await expectAccessible(page, 'wizard with a field error')

      // Fixed URL, bad cron: the preview passes (it does not look at schedules), saving fails.
      await url.fill('')
      await wizard.getByLabel('Delta sync (cron)').fill('every night')
      await wizard.getByRole('button', { name: 'Next: test connection' }).click()
      await wizard.getByRole('button', { name: 'Run test' }).click()
      await expect(wizard.getByRole('status', { name: 'Connection test result' }).innerText()).resolves.toContain('All checks passed.')
      await wizard.getByRole('button', { name: 'Save connection' }).click()
      const cron = wizard.getByLabel('Delta sync (cron)')
      const cronError = await fieldError(cron)
      expect(cronError).toContain('every night') // the API names the value it refused
      await expect(wizard.getByLabel('Full sync (cron)').getAttribute('aria-invalid')).resolves.toBeNull()
      await expect(url.getAttribute('aria-invalid')).resolves.toBeNull() // the old error is gone
      const saved = await u.call<{ data: unknown[] }>('GET', `/api/workspaces/${u.workspace.id}/connections`)
      expect(saved.data).toEqual([])

      // Corrected, it saves.
      await cron.fill('30 4 * * 1-5')
      await wizard.getByRole('button', { name: 'Next: test connection' }).click()
      await wizard.getByRole('button', { name: 'Save connection' }).click()
      const conn = page.getByRole('region', { name: 'Connection Metadata service' })
      await conn.waitFor()
      await expect(conn.innerText()).resolves.toContain('delta 30 4 * * 1-5')
      recordResult('accessibility', { settings_field_error: summary(errorAxe) })
    } finally {
      await closeTab(tab)
    }
  })

  it('stores a secret and an own SAP login without ever showing them back', async () => {
    const u = await userWithWorkspace('secrets')
    const name = 'ERP Test'
    await u.createSimulatedConnection(u.workspace.id, name)
    const secret = secretValue('router')
    const password = secretValue('pw')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${u.workspace.id}/settings/connections`)
      await page.getByRole('region', { name: `Connection ${name}` }).getByRole('button', { name: `Secrets ${name}` }).click()
      const dialog = page.getByRole('dialog', { name: `Secrets of ${name}` })
      await dialog.getByText('No secrets stored.').waitFor()
      await dialog.getByLabel('Secret name').fill('router')
      await dialog.getByLabel('Secret value').fill(secret)
      await dialog.getByRole('button', { name: 'Store secret' }).click()
      await dialog.getByRole('status').filter({ hasText: 'Stored router.' }).waitFor()
      const row = dialog.getByRole('table', { name: 'Stored secrets' }).getByRole('row', { name: /router/ })
      await expect(row.innerText()).resolves.toContain('Stored')
      await expect(dialog.getByLabel('Secret value').inputValue()).resolves.toBe('')
      expect(await pageShows(page, secret), 'the secret is shown in the page').toBe(false)
      const secretsAxe = await expectAccessible(page, 'secrets dialog')
      await page.keyboard.press('Escape')
      await dialog.waitFor({ state: 'detached' })
      // Nor after opening the dialog again (its list comes from the API, which never returns values).
      await page.getByRole('button', { name: `Secrets ${name}` }).click()
      await dialog.getByRole('row', { name: /router/ }).waitFor()
      expect(await pageShows(page, secret)).toBe(false)
      await page.keyboard.press('Escape')

      // My SAP logins: the user's own login for the connection; the password is write-only.
      await page.getByRole('navigation', { name: 'Workspace settings' }).getByRole('link', { name: 'My SAP logins' }).click()
      const login = page.getByRole('region', { name: `SAP login for ${name}` })
      await login.getByText('No login stored.').waitFor()
      await login.getByLabel(`SAP user for ${name}`).fill('DEVELOPER')
      await login.getByLabel(`SAP password for ${name}`).fill(password)
      await login.getByRole('button', { name: `Save login for ${name}` }).click()
      await login.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
      await login.getByText(/^Stored: SAP user DEVELOPER, updated /).waitFor()
      await expect(login.getByLabel(`SAP password for ${name}`).inputValue()).resolves.toBe('')
      expect(await pageShows(page, password), 'the SAP password is shown in the page').toBe(false)
      const loginsAxe = await expectAccessible(page, 'my SAP logins tab')

      // Kept across a reload; still no value in the page.
      await page.reload()
      await login.getByText(/Stored: SAP user DEVELOPER/).waitFor()
      await expect(login.getByLabel(`SAP user for ${name}`).inputValue()).resolves.toBe('DEVELOPER')
      expect(await pageShows(page, password)).toBe(false)
      expect(await pageShows(page, secret)).toBe(false)
      recordResult('accessibility', { settings_secrets: summary(secretsAxe), settings_sap_logins: summary(loginsAxe) })
    } finally {
      await closeTab(tab)
    }
  })

  it('adds an org member, refuses someone outside the org under User ID, and saves the tool policy', async () => {
    const u = await userWithWorkspace('members')
    const colleague = await apiUser(uniqueUser('colleague'))
    await u.call('POST', `/api/orgs/${u.org.id}/members`, { user_id: colleague.user, role: 'member' })
    const stranger = uniqueUser('stranger')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${u.workspace.id}/settings/members`)
      const userField = page.getByLabel('User ID')
      await userField.fill(stranger)
      await page.getByLabel('Role', { exact: true }).selectOption('admin')
      await page.getByRole('button', { name: 'Add member' }).click()
      const err = await fieldError(userField)
      expect(err).toMatch(/member of the workspace's organization/)
      expect(err).toContain('Organization settings') // the next step
      const membersAxe = await expectAccessible(page, 'members tab with an error')
      const members = page.getByRole('table', { name: 'Members of the workspace' })
      await expect(members.getByRole('row', { name: new RegExp(stranger) }).count()).resolves.toBe(0)

      // An org member is added; the error goes away.
      await userField.fill(colleague.user)
      await page.getByRole('button', { name: 'Add member' }).click()
      await members.getByRole('row', { name: new RegExp(colleague.user) }).waitFor()
      await expect(page.getByRole('combobox', { name: `Role of ${colleague.user}` }).inputValue()).resolves.toBe('admin')
      await expect(userField.getAttribute('aria-invalid')).resolves.toBeNull()
      await expect(userField.inputValue()).resolves.toBe('')

      // Tool policy: the choice is saved at once and kept.
      await page.getByRole('navigation', { name: 'Workspace settings' }).getByRole('link', { name: 'Tool policy' }).click()
      const everything = page.getByRole('radio', { name: 'Run everything' })
      await expect(page.getByRole('radio', { name: 'Run reads, ask for writes' }).getAttribute('aria-checked')).resolves.toBe('true') // the default
      await everything.click()
      await page.getByRole('status').filter({ hasText: /^Saved$/ }).waitFor()
      await expect(everything.getAttribute('aria-checked')).resolves.toBe('true')
      const policyAxe = await expectAccessible(page, 'tool policy tab')
      await expect(u.call<{ policy: string }>('GET', `/api/workspaces/${u.workspace.id}/tool-policy`)).resolves.toMatchObject({ policy: 'run_everything', effective_policy: 'run_everything' })
      await page.reload()
      await expect(page.getByRole('radio', { name: 'Run everything' }).getAttribute('aria-checked')).resolves.toBe('true')

      // The General tab, for the record: axe on every settings tab.
      await page.getByRole('navigation', { name: 'Workspace settings' }).getByRole('link', { name: 'General' }).click()
      await page.getByLabel('Workspace name').waitFor()
      const generalAxe = await expectAccessible(page, 'general tab')
      recordResult('accessibility', { settings_members: summary(membersAxe), settings_tool_policy: summary(policyAxe), settings_general: summary(generalAxe) })
    } finally {
      await closeTab(tab)
    }
  })

  it('deletes a workspace with its progress and leaves it out of the sidebar', async () => {
    const u = await userWithWorkspace('gone')
    const other = await u.createWorkspace(u.org.id, 'gone keeper')
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await signInWithToken(page, u.user, `/w/${u.workspace.id}/settings/general`)
      await page.getByRole('button', { name: 'Delete workspace…' }).click()
      const confirm = page.getByRole('alertdialog')
      await confirm.getByRole('button', { name: 'Delete workspace' }).click()
      // The deletion runs in the background; the page follows it, then goes to another workspace.
      await page.waitForURL((url) => !url.pathname.includes(u.workspace.id), { timeout: 60_000 })
      const sidebar = page.getByRole('navigation', { name: 'Sidebar' })
      await sidebar.getByRole('link', { name: 'gone keeper' }).waitFor()
      await expect(sidebar.getByRole('link', { name: 'gone workspace' }).count()).resolves.toBe(0)
      await expect(u.call('GET', `/api/workspaces/${u.workspace.id}`)).rejects.toMatchObject({ status: 404 })
      expect((await u.call<{ id: string }>('GET', `/api/workspaces/${other.id}`)).id).toBe(other.id)
    } finally {
      await closeTab(tab)
    }
  })
})
