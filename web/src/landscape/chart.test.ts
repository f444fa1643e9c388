import { describe, expect, it } from 'vitest'
import { barLength, niceMax, shareText, ticks } from './chart'

describe('niceMax', () => {
  it('rounds up to 1, 2, 2.5, 5 × 10^k', () => {
    expect(niceMax(0)).toBe(1)
    expect(niceMax(-5)).toBe(1)
    expect(niceMax(1)).toBe(1)
    expect(niceMax(7)).toBe(10)
    expect(niceMax(13)).toBe(20)
    expect(niceMax(21)).toBe(25)
    expect(niceMax(2600)).toBe(5000)
    expect(niceMax(0.3)).toBeCloseTo(0.5)
  })
})

describe('ticks and barLength', () => {
  it('splits the axis evenly', () => {
    expect(ticks(100)).toEqual([0, 25, 50, 75, 100])
  })
  it('scales bars to the axis and keeps tiny ones visible', () => {
    expect(barLength(50, 100, 300)).toBe(150)
    expect(barLength(100, 100, 300)).toBe(300)
    expect(barLength(0, 100, 300)).toBe(0)
    expect(barLength(1, 100000, 300)).toBe(1)
    expect(barLength(200, 100, 300)).toBe(300)
    expect(barLength(5, 0, 300)).toBe(0)
  })
})

describe('shareText', () => {
  it('shows one decimal', () => {
    expect(shareText(0.125)).toBe('12.5 %')
    expect(shareText(0)).toBe('0 %')
    expect(shareText(1)).toBe('100 %')
  })
})
