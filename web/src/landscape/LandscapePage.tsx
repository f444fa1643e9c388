export default function LandscapePage() {
  return <main className="p-6">LandscapePage</main>
}
