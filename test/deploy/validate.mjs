// Validates Kubernetes objects offline against the schemas of the pinned kubernetes-models and
// @kubernetes-models/prometheus-operator packages (package.json here): each object is built with
// its kind's model class and validated (JSON schema: types, required fields, enums, formats).
// Those schemas leave objects open (a misspelt field passes), as the API server's non-strict
// decoding would silently drop it; kubectl's --validate=strict refuses it. To refuse it too, the
// object is validated through proxies that record which fields the compiled validator reads:
// it reads every field its schema knows (and every key of a map), so a field it never read is
// one the schema does not have. Reads a JSON array of {source, object} on stdin; prints one line
// per object; exits 1 when one is invalid, has an unknown field or an unknown kind.
//
// usage: node validate.mjs < objects.json   (NODE_PATH: the node_modules of package.json)
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const require = createRequire(path.join(process.env.MODELS_DIR, "node_modules", "x.js"));
const items = JSON.parse(readFileSync(0, "utf8"));
let bad = 0;
for (const { source, object } of items) {
  const [group, version] = object.apiVersion.includes("/")
    ? object.apiVersion.split("/")
    : ["", object.apiVersion];
  const modulePath = group === "monitoring.coreos.com"
    ? `@kubernetes-models/prometheus-operator/${group}/${version}`
    : `kubernetes-models/${group ? group + "/" : ""}${version}`;
  const name = `${source}: ${object.kind} ${object.metadata?.namespace ?? ""}/${object.metadata?.name}`;
  let Model;
  try {
    Model = require(modulePath)[object.kind];
  } catch (e) {
    Model = undefined;
  }
  if (!Model) {
    console.log(`FAIL ${name}: no schema for ${object.apiVersion} ${object.kind}`);
    bad++;
    continue;
  }
  const seen = new Map();  // object -> keys the validator read
  const watch = (value, at) => {
    if (value === null || typeof value !== "object") return value;
    const read = new Set();
    seen.set(value, { at, read });
    return new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === "string") read.add(key);
        return watch(Reflect.get(target, key, receiver), `${at}/${String(key)}`);
      },
    });
  };
  try {
    // The model itself is watched too: validate() runs the schema on `this`.
    watch(new Model(object), "").validate();
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message}`);
    bad++;
    continue;
  }
  const unknown = [];
  for (const [value, { at, read }] of seen) {
    if (Array.isArray(value)) continue;
    for (const key of Object.keys(value)) if (!read.has(key)) unknown.push(`${at}/${key}`);
  }
  if (unknown.length) {
    console.log(`FAIL ${name}: fields the schema does not have: ${[...new Set(unknown)].join(", ")}`);
    bad++;
  } else {
    console.log(`ok ${name}`);
  }
}
process.exit(bad ? 1 : 0);
