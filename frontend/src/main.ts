import "./styles/base.css";

import { createApp } from "vue";

import App from "./App.vue";
import { registerServiceWorker } from "./pwa";
import { router } from "./router";

createApp(App).use(router).mount("#app");
registerServiceWorker();
