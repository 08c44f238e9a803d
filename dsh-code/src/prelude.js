// Evaluated once per run, before the program. It is a function expression: the host
// calls it with its two functions, the visible tool names and, when deferred tools are
// searchable, its search function, so nothing of the host
// ever becomes a global. It returns `[finish, refuse]`: `finish` settles the program's
// promise into what the host reads, `refuse` is how the host rejects a tool call (a
// success the host resolves itself). Every builtin it relies on is captured here, so a
// program that replaces `JSON.stringify` or `Array.isArray` cannot change how arguments
// cross.
(function (hostSubmit, hostSubmitText, hostLog, names, prefixLength, hostSearch) {
  'use strict';
  const G = globalThis;
  const isArray = Array.isArray;
  const arrayProto = Array.prototype;
  const objectProto = Object.prototype;
  const getProto = Object.getPrototypeOf;
  const ownKeys = Reflect.ownKeys;
  const getOwn = Object.getOwnPropertyDescriptor;
  const define = Object.defineProperty;
  const create = Object.create;
  const freeze = Object.freeze;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const isFinite = Number.isFinite;
  const toStr = String;
  const ErrorBase = Error;
  const TypeErr = TypeError;
  const RangeErr = RangeError;
  const ident = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const test = (re, s) => RegExp.prototype.test.call(re, s);
  const MakeSet = Set;
  const setHas = Set.prototype.has;
  const setAdd = Set.prototype.add;
  const setDelete = Set.prototype.delete;
  const MakeMap = Map;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const MakePromise = Promise;
  const push = (a, v) => { a[a.length] = v; };
  const join = (a, sep) => Array.prototype.join.call(a, sep);

  const member = (path, key) =>
    typeof key === 'number' ? `${path}[${key}]`
      : test(ident, key) ? `${path}.${key}` : `${path}[${stringify(key)}]`;

  const fail = (path, what) => { throw new TypeErr(`${path} ${what}`); };

  // The JSON text of `root` when it is made only of null, booleans, finite numbers
  // (not -0), strings, dense plain arrays and plain objects with enumerable string-keyed
  // data properties; otherwise a TypeError with the path of the first offending value
  // (an object's own keys are all checked before any of its values is visited). Every
  // value is read once, so what is checked is what is written. An object inside itself
  // is a cycle, a shared one is fine; too deep a value is the engine's RangeError. The
  // path is assembled only on failure, from the keys walked so far.
  // Quoted object keys, remembered (keys repeat across calls; quoting is costly).
  const quotedKeys = new MakeMap();
  let quotedCount = 0;
  const quoteKey = (k) => {
    let q = mapGet.call(quotedKeys, k);
    if (q === undefined) {
      q = stringify(k);
      if (quotedCount < 4096) {
        mapSet.call(quotedKeys, k, q);
        quotedCount++;
      }
    }
    return q;
  };
  const encode = (root, label) => {
    const trail = [];
    const objects = [];
    let depth = 0;
    let deep = null; // ancestors past the first 64, made when needed
    const bad = (what) => {
      let path = label;
      for (let i = 0; i < trail.length; i++) path = member(path, trail[i]);
      fail(path, what);
    };
    const onPath = (v) => {
      const n = depth < 64 ? depth : 64;
      for (let i = 0; i < n; i++) if (objects[i] === v) return true;
      return deep !== null && setHas.call(deep, v);
    };
    const walk = (v) => {
      switch (typeof v) {
        case 'string': return stringify(v);
        case 'boolean': return v ? 'true' : 'false';
        case 'number':
          if (!isFinite(v)) bad(`is ${v}, not a finite number`);
          if (v === 0 && 1 / v < 0) bad('is -0');
          return toStr(v);
        case 'undefined': return bad('is undefined');
        case 'bigint': return bad('is a BigInt');
        case 'symbol': return bad('is a symbol');
        case 'function': return bad('is a function');
        default: break;
      }
      if (v === null) return 'null';
      if (onPath(v)) bad('contains itself (a cycle)');
      const proto = getProto(v);
      const keys = ownKeys(v);
      const values = [];
      let out;
      if (isArray(v)) {
        if (proto !== arrayProto) bad('is not a plain array');
        const length = v.length;
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          if (k === 'length') continue;
          if (typeof k !== 'string' || toStr(k >>> 0) !== k || (k >>> 0) >= length) {
            bad(`has a property ${typeof k === 'symbol' ? 'keyed by a symbol' : stringify(k)} besides its items`);
          }
        }
        for (let i = 0; i < length; i++) {
          const d = getOwn(v, i);
          if (d === undefined || !('value' in d)) {
            push(trail, i);
            bad(d === undefined ? 'is a hole (sparse array)' : 'is an accessor');
          }
          values[i] = d.value;
        }
      } else {
        if (proto !== objectProto && proto !== null) {
          const ctor = proto && getOwn(proto, 'constructor');
          const kind = ctor && typeof ctor.value === 'function' && ctor.value.name ? ctor.value.name : 'non-plain';
          bad(`is a ${kind} object, not a plain object`);
        }
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i];
          if (typeof k === 'symbol') bad('has a symbol key');
          const d = getOwn(v, k);
          if (!d.enumerable || !('value' in d)) {
            push(trail, k);
            bad(!d.enumerable ? 'is not enumerable' : 'is an accessor');
          }
          values[i] = d.value;
        }
      }
      if (depth < 64) {
        objects[depth] = v;
      } else {
        if (deep === null) deep = new MakeSet();
        setAdd.call(deep, v);
      }
      depth++;
      const array = isArray(v);
      out = array ? '[' : '{';
      for (let i = 0; i < values.length; i++) {
        const k = array ? i : keys[i];
        if (i > 0) out += ',';
        if (!array) out += quoteKey(k) + ':';
        push(trail, k);
        out += walk(values[i]);
        trail.length--;
      }
      depth--;
      if (depth >= 64) setDelete.call(deep, v);
      return out + (array ? ']' : '}');
    };
    return walk(root);
  };

  const messageOf = (e) => {
    try {
      return e instanceof ErrorBase ? toStr(e.message) : toStr(e);
    } catch (_) {
      return 'unprintable value';
    }
  };

  class ToolCallError extends ErrorBase {
    constructor(toolName, message) {
      super(message);
      define(this, 'name', { value: 'ToolCallError', writable: true, configurable: true });
      define(this, 'toolName', { value: toolName, enumerable: true, writable: true, configurable: true });
      delete this.stack;
    }
  }
  define(ToolCallError.prototype, 'name', { value: 'ToolCallError', writable: true, configurable: true });

  const rejected = (e) => new MakePromise((_, reject) => { reject(e); });

  // `tools.<name>(args)`: the host makes the promise and settles it (a string: the call
  // was refused now). The tool is named to the host by its index in `names`. The host
  // reads plain arguments itself (`undefined`: not plainly JSON, or none); the others
  // cross as the encoder's JSON text, or are refused with the encoder's reason.
  const binding = (name, index) => function (args) {
    let promise = args === undefined ? undefined : hostSubmit(index, args);
    if (promise === undefined) {
      let text;
      try {
        if (args === undefined) {
          throw new TypeErr('(call the tool with an arguments object, e.g. `{}`)');
        }
        text = encode(args, 'args');
      } catch (e) {
        const why = e instanceof RangeErr ? 'args are nested too deeply' : messageOf(e);
        return rejected(new ToolCallError(name, `tool arguments must be lossless JSON: ${why}`));
      }
      promise = hostSubmitText(index, text);
    }
    return typeof promise === 'string' ? rejected(new ToolCallError(name, promise)) : promise;
  };

  const refuse = (reject, name, message) => { reject(new ToolCallError(name, message)); };

  // The bindings are own properties of a frozen object, found without running any code;
  // only a name that is not one reaches the prototype, a proxy that explains.
  const known = join(names, ', ');
  const unknown = new Proxy(create(null), {
    get(target, key) {
      if (typeof key === 'symbol' || key === 'then' || key === 'toJSON') return undefined;
      throw new TypeErr(`unknown tool ${stringify(key)}; available tools: ${known || '(none)'}`);
    },
    set() { return false; },
    defineProperty() { return false; },
    deleteProperty() { return false; },
    setPrototypeOf() { return false; },
  });
  const tools = create(unknown);
  for (let i = 0; i < names.length; i++) {
    define(tools, names[i], { value: binding(names[i], i), enumerable: true });
  }
  // `tools.search(query, options)`: the host answers at once with `['ok', json]` (the
  // matches) or `['err', why]`.
  if (typeof hostSearch === 'function') {
    const search = function (query, options) {
      if (typeof query !== 'string') {
        return rejected(new ToolCallError('search', 'tools.search(query): `query` must be a string'));
      }
      let text;
      try {
        text = encode([query, options === undefined ? null : options], 'options');
      } catch (e) {
        const why = e instanceof RangeErr ? 'options are nested too deeply' : messageOf(e);
        return rejected(new ToolCallError('search', `tools.search: ${why}`));
      }
      const answer = hostSearch(text);
      if (answer[0] !== 'ok') return rejected(new ToolCallError('search', answer[1]));
      const found = parse(answer[1]);
      return new MakePromise((resolve) => { resolve(found); });
    };
    // `tools.call(name, args)`: any visible tool by name, the deferred ones included.
    const byName = new MakeMap();
    for (let i = 0; i < names.length; i++) mapSet.call(byName, names[i], binding(names[i], i));
    const call = function (name, args) {
      const bound = typeof name === 'string' ? mapGet.call(byName, name) : undefined;
      if (bound === undefined) {
        const shown = typeof name === 'string' ? stringify(name) : `a ${typeof name}`;
        return rejected(new ToolCallError(toStr(name), `tools.call: unknown tool ${shown}; find deferred tools with tools.search(query)`));
      }
      return bound(args);
    };
    define(tools, 'search', { value: search, enumerable: true });
    define(tools, 'call', { value: call, enumerable: true });
  }
  freeze(tools);

  // console: every method appends one line; strings print raw, other values as JSON
  // where possible.
  const show = (v) => {
    switch (typeof v) {
      case 'string': return v;
      case 'undefined': return 'undefined';
      case 'function': return `[Function ${v.name || '(anonymous)'}]`;
      case 'bigint': return `${v}n`;
      case 'symbol': return v.toString();
      case 'number': return v === 0 && 1 / v < 0 ? '-0' : toStr(v);
      case 'boolean': return toStr(v);
      default: break;
    }
    if (v === null) return 'null';
    try {
      if (v instanceof ErrorBase) return `${v.name}: ${v.message}`;
      const seen = new MakeSet();
      const text = stringify(v, function (k, x) {
        if (typeof x === 'bigint') return `${x}n`;
        if (typeof x === 'function') return `[Function ${x.name || '(anonymous)'}]`;
        if (typeof x === 'undefined') return 'undefined';
        if (typeof x === 'number' && !isFinite(x)) return toStr(x);
        if (typeof x === 'object' && x !== null) {
          if (setHas.call(seen, x)) return '[Circular]';
          setAdd.call(seen, x);
        }
        return x;
      });
      return text === undefined ? toStr(v) : text;
    } catch (_) {
      try { return toStr(v); } catch (_e) { return '[object]'; }
    }
  };
  const emit = function (...args) {
    const parts = [];
    for (let i = 0; i < args.length; i++) push(parts, show(args[i]));
    hostLog(join(parts, ' '));
  };
  const consoleObject = freeze({
    log: emit, info: emit, warn: emit, error: emit, debug: emit, trace: emit,
  });

  const fixed = { writable: false, enumerable: false, configurable: false };
  define(G, 'console', { ...fixed, value: consoleObject });
  define(G, 'tools', { ...fixed, value: tools });
  define(G, 'ToolCallError', { ...fixed, value: ToolCallError });

  // Where an error was thrown, in the program's own coordinates.
  const locate = (e) => {
    let stack;
    try { stack = e && typeof e === 'object' ? e.stack : undefined; } catch (_) { return ''; }
    if (typeof stack !== 'string') return '';
    const m = /\(?program:(\d+):(\d+)\)?/.exec(stack);
    if (m === null) return '';
    const line = +m[1];
    let col = +m[2];
    if (line === 1) col = col > prefixLength ? col - prefixLength : 1;
    return ` (at line ${line}, column ${col})`;
  };
  const describe = (e) => {
    try {
      if (e instanceof ErrorBase) return `${e.name}: ${e.message}${locate(e)}`;
      return `uncaught ${show(e)}`;
    } catch (_) {
      return 'uncaught unprintable value';
    }
  };

  // Settles the program's promise into [tag, text]: ['u'] no result, ['r', json] a
  // result, ['i', why] a result that is not lossless JSON, ['e', why] a throw.
  const finish = async function (program) {
    let value;
    try {
      value = await program;
    } catch (e) {
      return ['e', describe(e)];
    }
    if (value === undefined) return ['u', ''];
    try {
      return ['r', encode(value, 'result')];
    } catch (e) {
      return ['i', e instanceof RangeErr ? 'the result is nested too deeply' : messageOf(e)];
    }
  };
  return [finish, refuse];
})
