ALTER TABLE `credit_ledger` ADD `resumes` integer;--> statement-breakpoint
ALTER TABLE `results` ADD `resumes` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `checkpoint_generation` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `checkpoint_at` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `checkpoint_cpu_seconds` real;--> statement-breakpoint
ALTER TABLE `runs` ADD `checkpoint_wall_ms` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `checkpoint_peak_mb` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `prior_cpu_seconds` real DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `prior_wall_ms` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `prior_peak_mb` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `resumes` text;