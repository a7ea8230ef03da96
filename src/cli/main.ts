#!/usr/bin/env node
console.log("snowpea");
