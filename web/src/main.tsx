import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { BrowserRouter } from 'react-router'
import { SWRConfig } from 'swr'
import './index.css'
import { App } from './App'
import { AuthProvider } from './auth/AuthProvider'
import { fetcher } from './api/client'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter>
      <AuthProvider>
        <SWRConfig value={{ fetcher, revalidateOnFocus: false, shouldRetryOnError: false }}>
          <App />
        </SWRConfig>
      </AuthProvider>
    </BrowserRouter>
  </StrictMode>,
)
