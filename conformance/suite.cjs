// Helpers of conformance/run.sh that read YAML and the suite's results, run with the
// suite's own Node and its `yaml` package (CONFORMANCE_NODE_MODULES names the
// node_modules folder the suite is installed in).
//
//   node suite.cjs baseline BASELINE.yml REVISION [LEG]   the expected failures of a run
//       at REVISION: the LEG list (failures on every wire) and `LEG-REVISION` (failures
//       at that wire only), printed as a baseline file the suite reads
//   node suite.cjs unscored REVISION [LEG]                the LEG scenarios the
//       revision's requirement set runs without scoring, one `NAME REASON` a line
//   node suite.cjs summary REVISION RESULTS_DIR [LEG]     pass counts of a run, from the
//       checks.json of each scenario under RESULTS_DIR
//
// LEG is `server` (the default: the everything server) or `client` (the everything
// client, conformance/src/bin/everything-client.rs).

'use strict';

const fs = require('fs');
const path = require('path');

const modules = process.env.CONFORMANCE_NODE_MODULES;
if (!modules) {
  fail('CONFORMANCE_NODE_MODULES is not set');
}
const YAML = require(path.join(modules, 'yaml'));
const requirementsDir = path.join(
  modules,
  '@modelcontextprotocol',
  'conformance',
  'requirements'
);

function fail(message) {
  process.stderr.write(`suite.cjs: ${message}\n`);
  process.exit(2);
}

function readYaml(file) {
  try {
    return YAML.parse(fs.readFileSync(file, 'utf8')) ?? {};
  } catch (error) {
    return fail(`cannot read ${file}: ${error.message}`);
  }
}

function requirements(revision, leg) {
  const file = path.join(requirementsDir, `${revision}.yaml`);
  if (!fs.existsSync(file)) {
    fail(`the suite has no requirement set for ${revision} (${file})`);
  }
  const set = readYaml(file);
  return {
    scored: set[leg] ?? [],
    unscored: (set.not_scored ?? []).filter((e) => e.leg === leg)
  };
}

function list(doc, key, file) {
  const value = doc[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) fail(`${file}: '${key}' must be a list`);
  return value.map(String);
}

function baseline(file, revision, leg) {
  const doc = readYaml(file);
  const entries = [...list(doc, leg, file), ...list(doc, `${leg}-${revision}`, file)];
  process.stdout.write(YAML.stringify({ [leg]: entries }));
}

function unscored(revision, leg) {
  for (const entry of requirements(revision, leg).unscored) {
    process.stdout.write(`${entry.scenario} ${entry.reason}\n`);
  }
}

// The verdict of one scenario: `fail` when a check failed, `warn` when only warnings
// did (the baseline counts both as failures), `skip` when nothing was checked (every
// check the scenario's own is skipped or informational; the suite's wire-schema check
// aside), `pass` otherwise.
function verdict(checks) {
  if (checks.some((c) => c.status === 'FAILURE')) return 'fail';
  if (checks.some((c) => c.status === 'WARNING')) return 'warn';
  const own = checks.filter((c) => !c.id.startsWith('wire-schema-'));
  if (!own.some((c) => c.status === 'SUCCESS')) return 'skip';
  return 'pass';
}

// The checks of each scenario run under `dir`: `server-NAME-TIME/checks.json` for the
// server leg, `NAME-TIME/checks.json` for the client leg (an `auth/NAME` scenario's
// results are under `auth/NAME-TIME`).
function results(dir, leg) {
  const byScenario = new Map();
  const prefix = leg === 'server' ? 'server-' : '';
  const pattern = new RegExp(`^${prefix}(.+)-\\d{4}-\\d{2}-\\d{2}T[\\d-]+Z$`);
  const visit = (sub) => {
    const here = path.join(dir, sub);
    if (!fs.existsSync(here)) return;
    for (const name of fs.readdirSync(here)) {
      const match = pattern.exec(name);
      const file = path.join(here, name, 'checks.json');
      if (match && fs.existsSync(file)) {
        byScenario.set(path.posix.join(sub, match[1]), JSON.parse(fs.readFileSync(file, 'utf8')));
      } else if (!match && sub === '' && fs.statSync(path.join(here, name)).isDirectory()) {
        visit(name);
      }
    }
  };
  visit('');
  return byScenario;
}

function count(names, byScenario) {
  const tally = { pass: 0, warn: 0, skip: 0, fail: 0, missing: 0 };
  for (const name of names) {
    const checks = byScenario.get(name);
    tally[checks ? verdict(checks) : 'missing'] += 1;
  }
  return tally;
}

function line(label, names, tally) {
  const extra = [];
  if (tally.warn > 0) extra.push(`${tally.warn} more with warnings only`);
  if (tally.skip > 0) extra.push(`${tally.skip} skipped by the suite`);
  if (tally.missing > 0) extra.push(`${tally.missing} not run`);
  const more = extra.length > 0 ? ` (${extra.join(', ')})` : '';
  return `${label}: ${tally.pass}/${names.length} scenarios pass${more}`;
}

function summary(revision, dir, leg) {
  const set = requirements(revision, leg);
  const byScenario = results(dir, leg);
  const label = leg === 'server' ? revision : `${revision} client`;
  const out = [line(`${label} required`, set.scored, count(set.scored, byScenario))];
  const reasons = [...new Set(set.unscored.map((e) => e.reason))];
  for (const reason of reasons) {
    const names = set.unscored.filter((e) => e.reason === reason).map((e) => e.scenario);
    const label =
      reason === 'extension'
        ? `${revision}${leg === 'server' ? ' extension (tasks)' : ' client extension'}`
        : `${revision}${leg === 'server' ? '' : ' client'} not scored, ${reason}`;
    const marks = names.map((n) => {
      const checks = byScenario.get(n);
      return `${checks ? { pass: '+', warn: '~', skip: '=', fail: '-' }[verdict(checks)] : '?'}${n}`;
    });
    out.push(`${line(label, names, count(names, byScenario))}: ${marks.join(' ')}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

function leg(arg) {
  if (arg === undefined) return 'server';
  if (arg !== 'server' && arg !== 'client') fail(`unknown leg '${arg}' (server or client)`);
  return arg;
}

const [command, ...args] = process.argv.slice(2);
if (command === 'baseline' && (args.length === 2 || args.length === 3)) {
  baseline(args[0], args[1], leg(args[2]));
} else if (command === 'unscored' && (args.length === 1 || args.length === 2)) {
  unscored(args[0], leg(args[1]));
} else if (command === 'summary' && (args.length === 2 || args.length === 3)) {
  summary(args[0], args[1], leg(args[2]));
} else {
  fail(
    'usage: suite.cjs baseline FILE REVISION [LEG] | unscored REVISION [LEG] | summary REVISION DIR [LEG]'
  );
}
