/**
 * A school administrator's view of their school: its classes (GET /classrooms/, which lists a
 * school's classes to its administrators), each opening the class overview.
 */
import { byId, h } from "./common";
import { t } from "./i18n";
import { chooseClassroom, classroomList } from "./teacher_class";
import { go } from "./teacher_routes";

function classesTable(): HTMLElement {
  const classes = classroomList();
  if (!classes.length) return h("p", {}, t("school_no_classes"));
  return h(
    "table",
    { class: "school-classes" },
    h("caption", {}, t("school_classes_caption", { count: classes.length })),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("classroom")))),
    h(
      "tbody",
      {},
      ...classes.map((c) => {
        const open = h("button", { type: "button", class: "link" }, c.name);
        open.addEventListener("click", () => {
          void chooseClassroom(c.id);
          void go({ view: "overview" });
        });
        return h("tr", { "data-classroom": String(c.id) }, h("th", { scope: "row" }, open));
      }),
    ),
  );
}

function draw(): void {
  byId("school-classes").replaceChildren(classesTable());
}

/** Draw the school's view once the list of classes is known. */
export function loadSchool(): void {
  draw();
}

export function redrawSchool(): void {
  draw();
}

export function resetSchool(): void {
  byId("school-classes").replaceChildren();
}
