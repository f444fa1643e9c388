import { describe, expect, it } from 'vitest'
import { splitBlocks } from './MarkdownBlocks'

describe('splitBlocks', () => {
  it('splits at blank lines but keeps fenced code whole', () => {
    const md = 'Intro **bold**\n\n- a\n- b\n\n```sql\nSELECT 1;\n\nSELECT 2;\n```\n\n\n| a |\n|---|\n| 1 |'
    expect(splitBlocks(md)).toEqual(['Intro **bold**', '- a\n- b', '```sql\nSELECT 1;\n\nSELECT 2;\n```', '| a |\n|---|\n| 1 |'])
  })
  it('an unterminated fence (a reply cut short) stays one block', () => {
    expect(splitBlocks('x\n\n~~~\ncode\n\nmore')).toEqual(['x', '~~~\ncode\n\nmore'])
  })
})
