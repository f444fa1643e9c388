// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, render, screen } from '@testing-library/react'
import { SWRConfig } from 'swr'
import { SignInPage } from './SignInPage'
import type { AuthConfig } from './oidc'

afterEach(cleanup)

async function renderWith(config: AuthConfig) {
  render(
    <SWRConfig value={{ provider: () => new Map(), fetcher: () => Promise.resolve(config) }}>
      <SignInPage />
    </SWRConfig>,
  )
  await screen.findByRole('heading', { level: 1 })
}

const oidc: AuthConfig = { mode: 'oidc', issuer: 'https://login.example.com', client_id: 'web', scopes: 'openid' }

describe('SignInPage', () => {
  it('offers the user-name form on a development server', async () => {
    await renderWith({ mode: 'dev' })
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Sign in to sapagent')
    expect(screen.getByLabelText('User name')).toBeTruthy()
    expect(screen.queryByRole('button', { name: 'Continue with your identity provider' })).toBeNull()
  })

  it('offers only the identity provider in production', async () => {
    await renderWith({ ...oidc, dev_sign_in: false })
    expect(screen.getByRole('button', { name: 'Continue with your identity provider' })).toBeTruthy()
    expect(screen.queryByLabelText('User name')).toBeNull()
  })

  it('offers both on a development server with OIDC, the provider first, one page heading', async () => {
    await renderWith({ ...oidc, dev_sign_in: true })
    const idp = screen.getByRole('button', { name: 'Continue with your identity provider' })
    const dev = screen.getByRole('button', { name: 'Sign in' })
    expect(idp.compareDocumentPosition(dev) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
    expect(screen.getByLabelText('User name')).toBeTruthy()
    expect(screen.getAllByRole('heading', { level: 1 })).toHaveLength(1)
    expect(screen.getByRole('heading', { level: 2 }).textContent).toBe('Development sign-in')
  })
})
