import { Outlet } from 'react-router'
import { Sidebar } from './Sidebar'

/** The signed-in frame: the sidebar and the current page. */
export function Shell() {
  return (
    <div className="flex h-full">
      <a href="#main" className="sr-only-focusable absolute left-2 top-2 z-50 rounded bg-white px-3 py-2 shadow">Skip to content</a>
      <Sidebar />
      <div id="main" className="flex min-w-0 flex-1 flex-col" tabIndex={-1}>
        <Outlet />
      </div>
    </div>
  )
}
