export default function OrgSettingsPage() {
  return <main className="p-6">OrgSettingsPage</main>
}
