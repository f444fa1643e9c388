export default function ChatPage() {
  return <main className="p-6">ChatPage</main>
}
