/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** Base URL of the JSON API when it is not same-origin (AWS: API Gateway). Empty = same origin. */
  readonly VITE_API_BASE?: string;
  /** Base URL of the SSE relay when it is not the API (AWS: Function URL). Empty = the API base. */
  readonly VITE_STREAM_BASE?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}

declare module "*.vue" {
  import type { DefineComponent } from "vue";
  const component: DefineComponent<object, object, unknown>;
  export default component;
}
