export default function OidcCallback() {
  return <main className="p-6">Signing in…</main>
}
