import { createRequire } from "node:module";
import { renderAsync } from "@resvg/resvg-js";
import { parse, View } from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

/**
 * Vega-Lite → Vega → SVG (vega's headless view: no canvas) → PNG (resvg). resvg draws text only with a font it
 * is given: the DejaVu Sans TrueType files of the dejavu-fonts-ttf package are handed to it and system fonts
 * are not loaded, so a picture looks the same on any host and needs no font installed there.
 */

const require = createRequire(import.meta.url);

const FONT_FILES = ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf"].map((f) =>
  require.resolve(`dejavu-fonts-ttf/ttf/${f}`),
);

/** The SVG Vega draws for a Vega-Lite spec. */
export async function specToSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * PNG bytes of an SVG, drawn at `scale` × its size (2: sharp on high-density screens). resvg rasterises on
 * libuv's thread pool (`renderAsync`): about as long as the SVG itself, kept off the thread that acks Slack.
 */
export async function svgToPng(svg: string, scale = 2): Promise<Buffer> {
  const image = await renderAsync(svg, {
    fitTo: { mode: "zoom", value: scale },
    font: { fontFiles: FONT_FILES, loadSystemFonts: false, defaultFontFamily: "DejaVu Sans" },
    background: "white",
  });
  return image.asPng();
}

export async function renderPng(spec: TopLevelSpec, scale = 2): Promise<Buffer> {
  return svgToPng(await specToSvg(spec), scale);
}
