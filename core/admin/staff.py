"""Staff actions in the console: each one a service called with the staff user and the reason
they gave (``core.staff.Staff``), behind a permission of its own, never an edit of a row.

A page declares its actions as ``StaffOperation`` values. Each is offered twice: as a button on
a row's own page (``<row>/staff/<action>/``) and as an action of the list for the rows ticked
there. Both ask for the reason on a page that says what will happen, then call the service once
per row; what it answered goes to the messages and to the admin's log (the service has recorded
the action itself, ``core.services.staff_action_record``)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme

from core.errors import DomainError
from core.selectors import staff_actions_of
from core.staff import REASON_MAX, Staff

CONFIRM = "staff_confirm"


def _always(row: Any) -> bool:
    return True


@dataclass(frozen=True)
class StaffOperation:
    """One staff action: ``perform(row, staff)`` calls the service and says what it did (one
    sentence); ``offered(row)`` tells whether the row's page shows its button."""

    name: str
    label: str
    permission: str
    explanation: str
    perform: Callable[[Any, Staff], str]
    offered: Callable[[Any], bool] = _always


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=REASON_MAX,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text="Kept with the action, with your name: say why, for whoever reads it later "
        "(a ticket number helps).",
    )


class StaffOperationsAdmin(admin.ModelAdmin):
    """A page whose rows staff act on through ``staff_operations``. With ``staff_subject`` (the
    ``StaffAction.subject_type`` its services record), a row's page lists the actions taken on
    it."""

    staff_operations: Sequence[StaffOperation] = ()
    staff_subject = ""

    def _operation(self, name: str) -> StaffOperation:
        for operation in self.staff_operations:
            if operation.name == name:
                return operation
        raise Http404(f"No staff action {name} here.")

    def get_urls(self) -> list[URLPattern]:
        opts = self.opts
        own = [
            path(
                "<path:object_id>/staff/<str:name>/",
                self.admin_site.admin_view(self.staff_operation_view),
                name=f"{opts.app_label}_{opts.model_name}_staff",
            )
        ]
        return own + super().get_urls()

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions: dict[str, Any] = super().get_actions(request)
        for operation in self.staff_operations:
            if request.user.has_perm(operation.permission):
                actions[operation.name] = (
                    self._list_action(operation),
                    operation.name,
                    f"{operation.label}…",
                )
        return actions

    def _list_action(self, operation: StaffOperation) -> Callable[..., HttpResponse | None]:
        def run(
            model_admin: "StaffOperationsAdmin", request: HttpRequest, rows: QuerySet[Any]
        ) -> HttpResponse | None:
            form = ReasonForm(request.POST if CONFIRM in request.POST else None)
            if form.is_bound and form.is_valid():
                self._perform(request, operation, list(rows), form.cleaned_data["reason"])
                return None  # back to the list, with the messages
            return self._confirm_page(request, operation, list(rows), form, from_list=True)

        return run

    def staff_buttons(self, request: HttpRequest, row: Model) -> list[dict[str, Any]]:
        """The actions this staff member may take on ``row``, for its page's tools."""
        return [
            {
                "label": operation.label,
                "url": reverse(
                    f"admin:{self.opts.app_label}_{self.opts.model_name}_staff",
                    args=[row.pk, operation.name],
                ),
                "offered": operation.offered(row),
            }
            for operation in self.staff_operations
            if request.user.has_perm(operation.permission)
        ]

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Model | None = None,
    ) -> HttpResponse:
        if obj is not None:
            context["staff_buttons"] = self.staff_buttons(request, obj)
            if self.staff_subject:
                context["staff_history"] = staff_actions_of(
                    subject_type=self.staff_subject, subject_id=str(obj.pk)
                )
        return super().render_change_form(request, context, add, change, form_url, obj)

    def staff_operation_view(self, request: HttpRequest, object_id: str, name: str) -> Any:
        operation = self._operation(name)
        if not request.user.has_perm(operation.permission):
            raise PermissionDenied
        row = self.get_object(request, object_id)
        if row is None:
            raise Http404(f"No {self.opts.verbose_name} {object_id}.")
        back = request.GET.get("next") or request.POST.get("next") or ""
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            back = ""
        form = ReasonForm(request.POST if request.method == "POST" else None)
        if form.is_bound and form.is_valid():
            self._perform(request, operation, [row], form.cleaned_data["reason"])
            change = reverse(
                f"admin:{self.opts.app_label}_{self.opts.model_name}_change", args=[row.pk]
            )
            return HttpResponseRedirect(back or change)
        return self._confirm_page(request, operation, [row], form, from_list=False, back=back)

    def _perform(
        self, request: HttpRequest, operation: StaffOperation, rows: list[Any], reason: str
    ) -> None:
        staff = Staff(user=request.user.get_username(), reason=reason)
        for row in rows:
            try:
                outcome = operation.perform(row, staff)
            except DomainError as exc:
                self.message_user(request, f"{row}: {exc.message}", messages.ERROR)
                continue
            self.log_change(request, row, f"{operation.label}: {outcome} Reason: {staff.reason}")
            self.message_user(request, f"{row}: {outcome}", messages.SUCCESS)

    def _confirm_page(
        self,
        request: HttpRequest,
        operation: StaffOperation,
        rows: list[Any],
        form: ReasonForm,
        *,
        from_list: bool,
        back: str = "",
    ) -> TemplateResponse:
        opts = self.opts
        context = {
            **self.admin_site.each_context(request),
            "opts": opts,
            "title": operation.label,
            "operation": operation,
            "rows": [
                {
                    "row": row,
                    "url": reverse(
                        f"admin:{opts.app_label}_{opts.model_name}_change", args=[row.pk]
                    ),
                }
                for row in rows
            ],
            "form": form,
            "from_list": from_list,
            "checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "confirm": CONFIRM,
            "back": back,
            "cancel_url": back
            or (
                reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
                if from_list
                else reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[rows[0].pk])
            ),
        }
        return TemplateResponse(request, "admin/console/staff_action.html", context)
