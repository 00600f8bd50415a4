#!/usr/bin/env node
// Node 24 strips the types of the .ts sources as it loads them; no build step is needed.
import "../src/main.ts"
