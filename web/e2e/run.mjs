#!/usr/bin/env node
// The browser tests' harness (`npm run e2e`, run by `make test`):
//  1. makes sure Debian's Chromium is installed (scripts/chromium.sh),
//  2. builds the page when it is stale (`make web`) and the dev binary, which embeds web/dist,
//  3. starts a private dev stack: a free port, a fresh Postgres database and Redis prefix, the
//     offline model scripted by e2e/rules.json, no Temporal ports,
//     and a fake OpenID Connect provider (e2e/oidc-provider.mjs) as its identity provider,
//  4. runs the tests (Vitest, e2e/vitest.config.ts) with the stack's URL in E2E_BASE_URL and the
//     provider's in E2E_OIDC_URL,
//  5. stops the stack and drops its database, also when the tests fail or are interrupted.
// Arguments go to Vitest (`npm run e2e -- signin` runs e2e/signin.test.ts only).
// Env: CHROMIUM (a browser other than /usr/bin/chromium), E2E_NO_BUILD=1 (use web/dist and the
// binary as they are), E2E_BINARY (a sapagent-dev binary to use), E2E_KEEP=1 (keep the stack's
// data directory), E2E_DATABASE_HOST / E2E_DATABASE_PORT / E2E_DATABASE_USER (default
// 127.0.0.1:5432, postgres), REDIS_URL.
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startProvider } from './oidc-provider.mjs'

const e2eDir = path.dirname(fileURLToPath(import.meta.url))
const webDir = path.dirname(e2eDir)
const repoRoot = path.dirname(webDir)
const resultsDir = path.join(e2eDir, 'results')
const started = Date.now()

function log(msg) {
  console.log(`e2e: ${msg} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
}

function fail(msg) {
  console.error(`e2e: ${msg}`)
  process.exit(1)
}

/** Runs a command to completion with inherited output; fails the run when it fails. */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: repoRoot, ...opts })
  if (r.error) fail(`${cmd}: ${r.error.message}`)
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`)
}

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.unref()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// --- 1. Chromium -------------------------------------------------------------------------------
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium'
if (!existsSync(chromiumPath)) {
  log('installing Chromium')
  run('bash', [path.join(repoRoot, 'scripts/chromium.sh')])
}

// --- 2. The page and the binary ----------------------------------------------------------------
const work = mkdtempSync(path.join(tmpdir(), 'sapagent-e2e-'))
let binary = process.env.E2E_BINARY
if (process.env.E2E_NO_BUILD !== '1') {
  if (has('make')) run('make', ['--no-print-directory', 'web'])
  else if (!existsSync(path.join(webDir, 'dist/index.html'))) run('npm', ['run', 'build'], { cwd: webDir })
}
if (!existsSync(path.join(webDir, 'dist/index.html'))) fail('web/dist/index.html is missing: build the page first (make web)')
if (!binary) {
  binary = path.join(work, 'sapagent-dev')
  log('building the dev binary')
  run(process.env.GO || 'go', ['build', '-o', binary, './cmd/sapagent-dev'])
}

// --- 3. A private dev stack ----------------------------------------------------------------------
const pg = {
  host: process.env.E2E_DATABASE_HOST || '127.0.0.1',
  port: process.env.E2E_DATABASE_PORT || '5432',
  user: process.env.E2E_DATABASE_USER || 'postgres',
}
const id = `${process.pid}_${randomBytes(3).toString('hex')}`
const database = `sapagent_e2e_${id}`
const redisPrefix = `sapagent-e2e-${id}:`
const dataDir = path.join(work, 'data')
const port = await freePort()
const baseURL = `http://127.0.0.1:${port}`
mkdirSync(resultsDir, { recursive: true })
const stackLogPath = path.join(resultsDir, 'stack.log')

function psql(sql) {
  return spawnSync('psql', ['-h', pg.host, '-p', pg.port, '-U', pg.user, '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-qc', sql], {
    encoding: 'utf8',
  })
}

let stack = null
let provider = null
let tests = null
let cleaning = null
/** Stops the stack and removes its data; every caller waits for the one clean-up. */
function cleanUp() {
  cleaning ??= stopAndRemove()
  return cleaning
}
async function stopAndRemove() {
  if (stack && stack.exitCode === null) {
    stack.kill('SIGTERM')
    for (let i = 0; i < 100 && stack.exitCode === null; i++) await sleep(100)
    if (stack.exitCode === null) stack.kill('SIGKILL')
  }
  await provider?.close()
  const r = psql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
  if (r.status !== 0) console.error(`e2e: could not drop database ${database}: ${r.stderr || r.error}`)
  if (has('redis-cli')) {
    // The prefix is unique to this run: its keys (rate limits, stream buffers) go with it.
    const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379/0'
    spawnSync('sh', ['-c', `redis-cli -u "$0" --scan --pattern "$1*" | xargs -r redis-cli -u "$0" unlink >/dev/null`, url, redisPrefix], {
      stdio: 'ignore',
    })
  }
  if (process.env.E2E_KEEP !== '1') rmSync(work, { recursive: true, force: true })
  else log(`kept ${work}`)
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    console.error(`e2e: ${sig}: stopping`)
    if (tests && tests.exitCode === null) tests.kill('SIGTERM')
    cleanUp().finally(() => process.exit(130))
  })
}

if (!has('psql')) fail('psql is not installed: the browser tests need it to create and drop their database')
// The identity provider comes first: the stack fetches its JWKS at start. Its access tokens name
// the audience the API checks (dev tokens carry it too), so the stack accepts both kinds.
const oidcAudience = 'sapagent-api'
// Tokens live 75 s, so the page's refresh (60 s before expiry) runs within a test (oidc.test.ts).
provider = await startProvider({ port: Number(process.env.E2E_OIDC_PORT ?? 18990), clientId: 'sapagent-web', appOrigin: baseURL, audience: oidcAudience, tokenTtl: 75 })
log(`fake OpenID provider on ${provider.url}`)

const created = psql(`CREATE DATABASE "${database}"`)
if (created.status !== 0) fail(`could not create database ${database} on ${pg.host}:${pg.port}: ${created.stderr || created.error}`)

const env = {
  ...process.env,
  OIDC_ISSUER: provider.url,
  OIDC_CLIENT_ID: provider.clientId,
  OIDC_AUDIENCE: oidcAudience,
  AUTH_JWKS_URL: `${provider.url}/jwks`,
  AUTH_AUDIENCE: oidcAudience,
  ENVIRONMENT: 'development',
  HTTP_ADDR: `127.0.0.1:${port}`,
  ALLOWED_ORIGINS: baseURL,
  TEMPORAL_PORT: '0',
  TEMPORAL_UI_PORT: '0',
  OFFLINE_LLM_ADDR: '127.0.0.1:0',
  SAPSIM_ADDR: '127.0.0.1:0',
  DEV_CONNECTOR_ADDR: '127.0.0.1:0', // the dev stack's connector in front of the simulator
  DATA_DIR: dataDir,
  DATABASE_URL: `postgres://${pg.user}@${pg.host}:${pg.port}/${database}?sslmode=disable`,
  REDIS_PREFIX: redisPrefix,
  AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
  // The offline model, scripted by the tests' own rules (the demo rules plus e2e ones).
  OPENAI_API_KEY: '',
  PRIMARY_MODEL: 'offline:sapagent-offline',
  EMBEDDINGS_MODEL: 'offline:sapagent-offline',
  OFFLINE_LLM_RULES: path.join(e2eDir, 'rules.json'),
  OFFLINE_LLM_TOKEN_DELAY: process.env.OFFLINE_LLM_TOKEN_DELAY || '15ms',
  // A landscape of ~21,000 objects (1,000 custom): a sync takes seconds, so landscape.test.ts sees
  // its progress bar advance (the built-in landscape syncs in under one).
  SAPSIM_LANDSCAPE_OBJECTS: process.env.SAPSIM_LANDSCAPE_OBJECTS || '20000',
  WORKER_STOP_GRACE: '2s',
}
delete env.OFFLINE_LLM_URL

log(`starting the dev stack on ${baseURL} (database ${database}, log ${path.relative(repoRoot, stackLogPath)})`)
const stackLog = createWriteStream(stackLogPath)
stack = spawn(binary, [], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] })
stack.stdout.pipe(stackLog)
stack.stderr.pipe(stackLog)

function tailOfLog() {
  try {
    return readFileSync(stackLogPath, 'utf8').split('\n').slice(-40).join('\n')
  } catch {
    return ''
  }
}

let exitCode = 1
try {
  // Embedded Temporal and the migrations take a few seconds on a cold machine.
  const deadline = Date.now() + 180_000
  for (;;) {
    if (stack.exitCode !== null) throw new Error(`the dev stack exited (${stack.exitCode}):\n${tailOfLog()}`)
    try {
      const res = await fetch(`${baseURL}/api/health`)
      if (res.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the dev stack did not become healthy within 180 s:\n${tailOfLog()}`)
    await sleep(250)
  }
  log('the dev stack is up; running the browser tests')

  // --- 4. The tests ------------------------------------------------------------------------------
  const vitest = path.join(webDir, 'node_modules/.bin/vitest')
  tests = spawn(vitest, ['run', '--config', path.join(e2eDir, 'vitest.config.ts'), ...process.argv.slice(2)], {
    cwd: webDir,
    stdio: 'inherit',
    // E2E_DATABASE_URL: tests that need bulk data (a 1,000-message chat) insert it directly.
    env: { ...process.env, E2E_BASE_URL: baseURL, E2E_OIDC_URL: provider.url, CHROMIUM: chromiumPath, E2E_RESULTS: resultsDir, E2E_DATABASE_URL: env.DATABASE_URL },
  })
  exitCode = await new Promise((resolve) => tests.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))))
  if (exitCode !== 0) console.error(`e2e: the browser tests failed; the dev stack's log is ${stackLogPath}`)
} catch (e) {
  console.error(`e2e: ${e.message}`)
  exitCode = 1
} finally {
  // --- 5. Clean up ------------------------------------------------------------------------------
  await cleanUp()
  log(exitCode === 0 ? 'passed' : 'failed')
}
process.exit(exitCode)
