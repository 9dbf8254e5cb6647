// `webpack` with webpack.config.js, through webpack's Node API (no webpack-cli to install),
// then the page beside the bundle.
import { copyFileSync } from "node:fs";
import webpack from "webpack";
import config from "./webpack.config.js";

const stats = await new Promise((resolve, reject) =>
  webpack(config, (err, stats) => (err ? reject(err) : resolve(stats))),
);
console.log(stats.toString({ colors: false, modules: false }));
if (stats.hasErrors()) process.exit(1);
copyFileSync("index.html", "dist/index.html");
