export default function SettingsPage() {
  return <main className="p-6">SettingsPage</main>
}
