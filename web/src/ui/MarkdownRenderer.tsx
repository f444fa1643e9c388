import ReactMarkdown from 'react-markdown'
import remarkGfm from 'remark-gfm'
import { rehypeCodeHighlight } from './highlight'
import { rehypeImagesAsLinks } from './images'
import './markdown.css'

// Links open in a new tab without handing the page to the target.
const components = {
  a: (props: React.AnchorHTMLAttributes<HTMLAnchorElement>) => <a {...props} target="_blank" rel="noopener noreferrer" />,
}

// Images never render (rehypeImagesAsLinks turns them into links first; this is the backstop).
const noImages = ['img']

export default function MarkdownRenderer({ text, className = '' }: { text: string; className?: string }) {
  return (
    <div className={`markdown ${className}`}>
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeImagesAsLinks, rehypeCodeHighlight]} components={components} disallowedElements={noImages}>
        {text}
      </ReactMarkdown>
    </div>
  )
}
