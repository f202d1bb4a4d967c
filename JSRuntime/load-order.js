// load-order.js
// Contract: the ONE computation of the order in which hosts evaluate JSRuntime's files, from the
// roles of manifest.json and each file's `__optimization.declare(file, {provides, uses, globals})`
// call. Both hosts use this file: tests/node-runner.test.js under Node, and the build tool
// Plugins/EmbedJSRuntimeTool in JavaScriptCore (which writes the Swift `EmbeddedJSRuntime` lists
// from its answer and fails the build with its error message). Not a runtime script: no engine
// loads it. Pure ES2020, no host bindings; installs `globalThis.__loadOrder`:
//   declarationOf(source, file) → {provides, uses, globals}   the literal passed to
//       `__optimization.declare('<file>', {...})` (arrays of string literals only), each sorted;
//       null when the source has no such call. Throws when the file declares itself under
//       another path or the literal is not arrays of strings.
//   sortFiles(declarations) → [file]   declarations: [{file, provides?, uses?}]. A file loads
//       after every file providing a name it uses; among the files ready to load, the smallest
//       path first, so the order is stable; FIRST (core/namespace.js, which defines `declare`)
//       always comes first. Throws an Error naming the problem when a used name is provided by
//       no file ("<file> uses <name>, which no file provides"), by two files ("<name> is
//       provided by <a> and <b>"), or when the declarations form a cycle ("the declarations
//       form a cycle: a.js (x) → b.js (y) → a.js", each file followed by a name it uses from the
//       next).
//   loadOrder(manifest, sources) → {client: [file], service: [file], all: [file]}
//       manifest: {core: [file], client: [file], service: [file]} (membership only, order
//       irrelevant); sources: {file: source text}. `client` = the client files and the core
//       files they need, sorted; `service` the same for the service files; `all` = every file
//       sorted (the Node suite and the contract checks load it). The core files an engine kind
//       needs: FIRST, every core file that installs globals (`globals`: the polyfills, the
//       host's callbacks) and every core file providing a name that a needed file uses. Throws
//       as sortFiles (the message names the role: core + that role must be whole), and when a
//       file is in two roles, in no known role, or has no declaration.
(function () {
  'use strict';

  var FIRST = 'core/namespace.js';
  var ROLES = ['core', 'client', 'service'];

  function stringArray(value, file, key) {
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.some(function (name) { return typeof name !== 'string'; })) {
      throw new Error(file + ': "' + key + '" must be an array of strings.');
    }
    return value.slice().sort();
  }

  function declarationOf(source, file) {
    var match = /__optimization\.declare\(\s*'([^']+)',\s*(\{[\s\S]*?\})\s*\)/.exec(source);
    if (match === null) return null;
    if (match[1] !== file) throw new Error(file + ' declares itself as ' + match[1]);
    // The literal holds arrays of string literals only: make it JSON.
    var literal = match[2].replace(/(\w+):/g, '"$1":').replace(/'/g, '"').replace(/,(\s*[\]}])/g, '$1');
    var parsed;
    try {
      parsed = JSON.parse(literal);
    } catch (error) {
      throw new Error(file + ': the declaration must be an object literal of string arrays.');
    }
    return {
      provides: stringArray(parsed.provides, file, 'provides'),
      uses: stringArray(parsed.uses, file, 'uses'),
      globals: stringArray(parsed.globals, file, 'globals'),
    };
  }

  function byPath(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function sortFiles(declarations) {
    var providers = {};
    var files = declarations.map(function (declaration) { return declaration.file; }).sort(byPath);
    var byFile = {};
    declarations.forEach(function (declaration) {
      byFile[declaration.file] = declaration;
      (declaration.provides || []).forEach(function (name) {
        if (Object.prototype.hasOwnProperty.call(providers, name)) {
          var pair = [providers[name], declaration.file].sort(byPath);
          throw new Error(name + ' is provided by ' + pair[0] + ' and ' + pair[1]);
        }
        providers[name] = declaration.file;
      });
    });
    // dependencies[file] = {providerFile: a name it uses from there}
    var dependencies = {};
    files.forEach(function (file) {
      var needs = {};
      (byFile[file].uses || []).slice().sort().forEach(function (name) {
        if (!Object.prototype.hasOwnProperty.call(providers, name)) {
          throw new Error(file + ' uses ' + name + ', which no file provides');
        }
        var provider = providers[name];
        if (provider !== file && needs[provider] === undefined) needs[provider] = name;
      });
      if (file !== FIRST && byFile[FIRST] !== undefined) delete needs[FIRST];
      dependencies[file] = needs;
    });
    var order = [];
    var placed = {};
    if (byFile[FIRST] !== undefined) {
      order.push(FIRST);
      placed[FIRST] = true;
    }
    for (;;) {
      var next = null;
      for (var i = 0; i < files.length && next === null; i += 1) {
        var candidate = files[i];
        if (placed[candidate]) continue;
        var ready = Object.keys(dependencies[candidate]).every(function (provider) { return placed[provider] === true; });
        if (ready) next = candidate;
      }
      if (next === null) break;
      order.push(next);
      placed[next] = true;
    }
    if (order.length < files.length) {
      var remaining = files.filter(function (file) { return !placed[file]; });
      throw new Error('the declarations form a cycle: ' + describeCycle(remaining[0], dependencies, placed));
    }
    return order;
  }

  // Every unplaced file waits for at least one unplaced provider: following the smallest one
  // from `start` must come back to a file already visited.
  function describeCycle(start, dependencies, placed) {
    var path = [];
    var seen = {};
    var file = start;
    while (seen[file] === undefined) {
      seen[file] = path.length;
      path.push(file);
      file = Object.keys(dependencies[file]).filter(function (provider) { return !placed[provider]; }).sort(byPath)[0];
    }
    var cycle = path.slice(seen[file]).concat([file]);
    return cycle.map(function (member, index) {
      return index === cycle.length - 1 ? member : member + ' (' + dependencies[member][cycle[index + 1]] + ')';
    }).join(' → ');
  }

  function loadOrder(manifest, sources) {
    if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) {
      throw new Error('manifest.json must be an object {core, client, service} of file lists.');
    }
    var roleOf = {};
    var members = {};
    Object.keys(manifest).forEach(function (role) {
      if (ROLES.indexOf(role) < 0) throw new Error('manifest.json: unknown role "' + role + '" (roles: ' + ROLES.join(', ') + ').');
    });
    ROLES.forEach(function (role) {
      members[role] = stringArray(manifest[role], 'manifest.json', role);
      members[role].forEach(function (file) {
        if (roleOf[file] !== undefined) throw new Error(file + ' is in the roles ' + roleOf[file] + ' and ' + role);
        roleOf[file] = role;
      });
    });
    var declarations = {};
    Object.keys(roleOf).forEach(function (file) {
      if (typeof sources[file] !== 'string') throw new Error('manifest.json lists ' + file + ', which cannot be read');
      var declaration = declarationOf(sources[file], file);
      if (declaration === null) throw new Error(file + " has no __optimization.declare('" + file + "', …) call");
      declaration.file = file;
      declarations[file] = declaration;
    });
    function sorted(role, files) {
      try {
        return sortFiles(files.map(function (file) { return declarations[file]; }));
      } catch (error) {
        throw new Error('role ' + role + ': ' + error.message);
      }
    }
    // The files of `role` and the core files they need, in load order (core + role sorted first,
    // so that its problems are reported whether or not a needed file shows them).
    function engine(role) {
      var whole = sorted(role, members.core.concat(members[role]));
      var providers = {};
      whole.forEach(function (file) {
        declarations[file].provides.forEach(function (name) { providers[name] = file; });
      });
      var needed = {};
      var pending = whole.filter(function (file) {
        return roleOf[file] === role || file === FIRST || declarations[file].globals.length > 0;
      });
      while (pending.length > 0) {
        var file = pending.pop();
        if (needed[file]) continue;
        needed[file] = true;
        declarations[file].uses.forEach(function (name) { pending.push(providers[name]); });
      }
      return whole.filter(function (file) { return needed[file] === true; });
    }
    return {
      client: engine('client'),
      service: engine('service'),
      all: sorted('all', members.core.concat(members.client, members.service)),
    };
  }

  globalThis.__loadOrder = { FIRST: FIRST, declarationOf: declarationOf, sortFiles: sortFiles, loadOrder: loadOrder };
})();
